// SPDX-License-Identifier: GPL-2.0
#include "util/version.h"

const char memtrack_version_string[] = MEMTRACK_VERSION;
