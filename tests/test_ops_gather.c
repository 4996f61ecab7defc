/* test_ops_gather.c — the gather op family against an independent reference (to be filled with the family). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "op_registry.h"

/* Every op the family registers can be found by name. */
static void family_ops_are_registered(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < kiln_ops_gather.count; i++)
        assert_ptr_equal(kiln_op_find(kiln_ops_gather.ops[i].name), &kiln_ops_gather.ops[i]);
    assert_null(kiln_op_find("no such op"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_ops_are_registered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
