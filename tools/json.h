/* json.h — the little JSON writing the verbs need: escaped strings. */
#ifndef KILN_TOOLS_JSON_H
#define KILN_TOOLS_JSON_H

#include <stdio.h>

/* Write `text` as a JSON string literal (quotes included, UTF-8 passed
 * through, control characters escaped). */
void json_string(FILE *out, const char *text);

#endif
