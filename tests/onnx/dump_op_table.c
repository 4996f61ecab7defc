/*
 * dump_op_table.c — the importer's mapping table as text, for
 * check_op_versions.py, which compares it with onnx.defs.
 *
 * Usage: dump_op_table
 * Prints "max_opset N" (KILN_ONNX_MAX_OPSET), then one line per row:
 * "row OP MIN MAX SINCE V1,V2,..." (MAX 1000: open-ended; SINCE: the opset
 * ONNX adds the op in as the row records it, 0 or 1 when the op predates
 * opset 7), followed by "target OP KILN_OP" when the row names the kiln op
 * it maps to; then "kiln_op NAME" for each op of this runtime's registry,
 * then "gap OP" for each op the table names a reason for
 * refusing (onnx_known_gap) among those it is asked about on stdin, one a
 * line, when given any.
 */
#include <stdio.h>
#include <string.h>

#include <kiln/kiln.h>
#include <kiln/onnx.h>

#include "onnx_mapping.h"

int main(void)
{
    printf("max_opset %d\n", KILN_ONNX_MAX_OPSET);
    for (size_t i = 0; i < onnx_mapping_count(); i++) {
        const onnx_op_mapping *row = onnx_mapping_at(i);
        printf("row %s %lld %lld %lld ", row->onnx_op, (long long)row->min_opset, (long long)row->max_opset,
               (long long)row->onnx_since);
        for (size_t v = 0; v < ONNX_SCHEMA_VERSIONS_MAX && row->versions[v]; v++)
            printf("%s%u", v ? "," : "", (unsigned)row->versions[v]);
        printf("\n");
        if (row->kiln_op)
            printf("target %s %s\n", row->onnx_op, row->kiln_op);
    }
    for (uint32_t i = 0; i < kiln_runtime_op_count(); i++) {
        const char *name;
        uint32_t min_version, max_version;
        kiln_runtime_op(i, &name, &min_version, &max_version);
        printf("kiln_op %s\n", name);
    }
    char op[256];
    while (fgets(op, sizeof op, stdin)) {
        op[strcspn(op, "\r\n")] = '\0';
        if (op[0] && onnx_known_gap(op))
            printf("gap %s\n", op);
    }
    return 0;
}
