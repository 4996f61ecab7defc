/* name_distance.c — how far apart two names are, for "did you mean" suggestions (kiln_name_distance). */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include <kiln/util.h>

/* Names longer than this are this far from everything: suggestions are for typos in short names. */
#define LONGEST_NAME 64

uint32_t kiln_name_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > LONGEST_NAME || lb > LONGEST_NAME)
        return LONGEST_NAME;
    /* Levenshtein, one row: row[j] is the distance between a[0..i) and b[0..j). */
    uint32_t row[LONGEST_NAME + 1];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (uint32_t)j;
    for (size_t i = 1; i <= la; i++) {
        uint32_t diagonal = row[0];
        row[0] = (uint32_t)i;
        for (size_t j = 1; j <= lb; j++) {
            uint32_t above = row[j];
            bool same = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]);
            uint32_t best = diagonal + (same ? 0 : 1);
            best = above + 1 < best ? above + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[lb];
}
