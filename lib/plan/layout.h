/*
 * layout.h — results kept in oneDNN's channels-last layout between the
 * nodes that can read it.
 *
 * oneDNN's fastest convolutions on x86 read and write channels-last data
 * (NHWC: for each image and position, the channels side by side), while
 * kiln's tensors are row-major NCHW. Converting at every conv in and out
 * cost as much as the convs themselves on a small CNN (spec/opset.md,
 * "Fast paths"). So a conv may leave its result channels-last when every
 * node that reads it can take that layout: another conv or a pool (whose
 * oneDNN primitives read it directly), or an elementwise op, which computes
 * the same values in any layout, as long as its own result may stay
 * channels-last too. The value keeps its logical shape [N, C, spatial...];
 * only the order of its elements in memory differs.
 *
 * What may hold channels-last data is decided per program, when it is
 * loaded (kiln_layout_plan); what does hold it, per run, by the session:
 * a kernel reports that it wrote channels-last data, and before a node
 * reads a value in a layout it cannot take, the session converts that
 * value back in place (kiln_layout_to_plain). Program outputs are always
 * row-major.
 */
#ifndef KILN_LIB_LAYOUT_H
#define KILN_LIB_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"
#include "op_registry.h"

/*
 * @return how node n of m reads channels-last operands: its op's trait,
 * where for an elementwise op ELEMENTWISE when its operands have the
 * result's shape, CHANNELWISE or CHANNELWISE_1 when one has and the other
 * is per channel and the op's trait is ELEMENTWISE_OR_PER_CHANNEL (f32
 * results only), else PLAIN_ONLY.
 */
kiln_layout_role kiln_layout_role_of(const kiln_model *m, uint32_t n);

/* @return the operand a CHANNELWISE (0) or CHANNELWISE_1 (1) node reads in either layout. */
uint32_t kiln_layout_channelwise_operand(kiln_layout_role role);

/*
 * Which node results may be left channels-last: *out gets node_count
 * flags (free()). A result qualifies when it is f32 of rank 3 to 5, not a
 * program output, and every node reading it takes the layout: conv, a
 * pool or a resize as operand 0 (trait READS_OPERAND_0), batch_norm as operand 0 when its result qualifies,
 * an elementwise op whose result qualifies (and, for a binary one,
 * whose other operand is a node result too: both in one layout), a
 * concat along the channel axis whose result qualifies (every operand a
 * node result, all taken in one layout), or an
 * add, sub, mul or div reading it against a per-channel operand
 * (CHANNELWISE, CHANNELWISE_1) when its result qualifies. Nodes that are
 * not run (`live` false, liveness.h) read nothing: a dead sigmoid left by
 * the importer's x * sigmoid(x) -> silu does not keep its conv row-major.
 * @return KILN_OK or KILN_ERR_OUT_OF_MEMORY.
 */
kiln_status kiln_layout_plan(const kiln_model *m, const bool *live, bool **out, kiln_error *err);

#endif
