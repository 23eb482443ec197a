// SPDX-License-Identifier: GPL-2.0
/* Built with BUILD_BPF_SKEL=0: track reports that it has no BPF. */
