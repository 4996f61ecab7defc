/* family_check.c — the registry check every op-family test starts with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>

#include "family_check.h"

static bool in_family(const kiln_op_family *family, const kiln_op_def *def)
{
    for (uint32_t i = 0; i < family->count; i++)
        if (def == &family->ops[i])
            return true;
    return false;
}

void assert_family_registered(const kiln_op_family *family, const char *const *names, size_t count)
{
    assert_true(family->count > 0);
    for (uint32_t i = 0; i < family->count; i++)
        assert_ptr_equal(kiln_op_find(family->ops[i].name), &family->ops[i]);
    for (size_t i = 0; i < count; i++) {
        const kiln_op_def *def = kiln_op_find_version(names[i], 1);
        if (!def || !in_family(family, def))
            fail_msg("'%s' version 1 is not registered by this family", names[i]);
    }
    assert_null(kiln_op_find("no such op"));
}
