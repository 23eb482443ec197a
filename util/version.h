/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_VERSION_H
#define MEMTRACK_VERSION_H

/* "0.1.0": what --version says and the artifact's Meta records */
extern const char memtrack_version_string[];

#endif
