// SPDX-License-Identifier: GPL-2.0
#include "builtin.h"

const char memtrack_version_string[] = MEMTRACK_VERSION;
