/* invariant.c — what a debug build does when a KILN_ASSERT fails. */
#include "invariant.h"

#include <stdio.h>
#include <stdlib.h>

#if defined(KILN_DEBUG_ASSERTS)
_Noreturn void kiln_invariant_broken(const char *condition, const char *file, int line)
{
    fprintf(stderr, "kiln: internal invariant broken at %s:%d: %s\n"
                    "kiln: this is a bug in kiln, not in the input; please report it with the command that ran\n",
            file, line, condition);
    abort();
}
#endif
