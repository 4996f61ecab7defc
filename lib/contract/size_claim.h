/*
 * size_claim.h — proving a precondition on shape expressions over the whole
 * declared domain (a == b, a is a multiple of k, a >= k), or refusing the
 * program with the node, the claim, the dims and a counterexample.
 * Shared by every shape rule with such a precondition (spec/contract.md §4).
 */
#ifndef KILN_LIB_SIZE_CLAIM_H
#define KILN_LIB_SIZE_CLAIM_H

#include "claim.h"
#include "shape_context.h"

/*
 * Prove `claim` over every point of the declared domain, in this order:
 * same expression; constant bounds or structure (constants, dims declared
 * multiple_of, products and sums); interval bounds; a declared relation
 * L <= R (a >= k when a - (R - L) >= k on the bounds); the polynomial
 * decision procedure (spec/contract.md §4.1); exhaustive enumeration
 * of the dims involved when they span at most KILN_DOMAIN_ENUMERATION_LIMIT
 * points. Otherwise fail with KILN_ERR_INVALID_PROGRAM:
 *   "<node>: cannot prove that <what> over the declared domain (dims: ...);
 *    counterexample: n=3. <advice>"
 * or, when no dim is involved, "<node>: it is not true that <what>. <advice>".
 * Every point looked at is paid for from ctx->budget (proof_budget.h);
 * when it runs out before the claim is decided, strict or not, fail with
 * KILN_ERR_LIMIT: "<node>: cannot decide within the proof budget (N
 * steps; kiln_limits.max_proof_steps) whether <what> over the declared
 * domain (dims: ...); ...".
 * `what` states the claim in words ("x axis 1 size c is divisible by 2");
 * `advice` (may be NULL) suggests a declaration; the domain is never
 * narrowed silently. When the context is non-strict (ctx->deferred), a
 * claim that involves dims and is not proven is added there as a runtime
 * guard and KILN_OK is returned; a false claim about constants is still
 * refused.
 */
kiln_status kiln_prove_size_claim(const kiln_shape_context *ctx, const kiln_size_claim *claim, const char *what,
                                  const char *advice, kiln_error *err);

/* Render expression `id` with the context's dim names ("?" if out of memory). */
void kiln_format_size(const kiln_shape_context *ctx, uint32_t id, char *text, size_t size);

#endif
