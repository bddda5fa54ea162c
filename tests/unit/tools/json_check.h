/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A strict JSON (RFC 8259) validator for the tests of --json output. */
#ifndef JSON_CHECK_H
#define JSON_CHECK_H

#include <stddef.h>

int json_valid(const char *text, size_t *error_at);

#endif /* JSON_CHECK_H */
