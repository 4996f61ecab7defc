/* node_name.c — see node_name.h. */
#include "node_name.h"

#include <stdbool.h>
#include <stdint.h>

/* Length of the well-formed UTF-8 sequence at `s` (of `left` bytes), or 0
 * (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF). */
static size_t utf8_sequence(const unsigned char *s, size_t left)
{
    if (s[0] < 0x80)
        return 1;
    size_t n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    if (n == 0 || n > left)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) || (s[0] == 0xf0 && s[1] < 0x90) ||
        (s[0] == 0xf4 && s[1] > 0x8f))
        return 0;
    return n;
}

const char *kiln_node_name_problem(const char *name, size_t length)
{
    if (length == 0)
        return "is empty";
    if (length > KILN_MAX_NODE_NAME)
        return "is longer than 1024 bytes";
    const unsigned char *s = (const unsigned char *)name;
    for (size_t i = 0; i < length;) {
        size_t n = utf8_sequence(s + i, length - i);
        if (n == 0)
            return "is not well-formed UTF-8";
        /* C0 controls, DEL and C1 controls (U+0080..U+009F: C2 80..C2 9F),
         * which terminals may obey as commands. */
        bool control = (n == 1 && (s[i] < 0x20 || s[i] == 0x7f)) || (n == 2 && s[i] == 0xc2 && s[i + 1] <= 0x9f);
        if (control)
            return "holds a control character";
        i += n;
    }
    return NULL;
}
