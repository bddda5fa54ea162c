/* SPDX-License-Identifier: GPL-2.0-or-later */
/* printf into a new string: the one formatting helper of the tools. */
#ifndef IOBAND_STRPRINTF_H
#define IOBAND_STRPRINTF_H

/* A new string (free() it), or NULL when out of memory. */
char *strprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
