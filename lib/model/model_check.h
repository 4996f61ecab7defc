/*
 * model_check.h — checking a whole program model: names, dims, inputs,
 * weights, every node's op, arity and shape rule (proving each
 * precondition over the declared domain), outputs, semantic checks and
 * stored guards. The model itself (model.h) is only data.
 */
#ifndef KILN_LIB_MODEL_CHECK_H
#define KILN_LIB_MODEL_CHECK_H

#include "model.h"

/*
 * Check the whole model and derive value_types: names, dims, inputs
 * (axes are constants or declared dims, or expressions over dims that
 * also appear bare), weights, op arity and shape rules, outputs. Every
 * proof of the check draws on one budget of `max_proof_steps`
 * (kiln_limits.max_proof_steps; proof_budget.h): a claim still undecided
 * when it runs out refuses the program with KILN_ERR_LIMIT.
 */
kiln_status kiln_model_infer(kiln_model *m, uint64_t max_proof_steps, kiln_error *err);

/* Each check refers to an input once, in input order, and fits its dtype. */
kiln_status kiln_model_check_semantic_checks(const kiln_model *m, kiln_error *err);

/*
 * Give input decl->input the check `decl`, judged against that input alone
 * (so an error names it), replacing a check it had (*replaced, may be
 * NULL, tells) and keeping checks sorted by input. The builder and
 * kiln_artifact_add_input_checks both set checks here. The model takes
 * `decl` over, also on error (it is released then).
 */
kiln_status kiln_model_set_input_check(kiln_model *m, kiln_input_check_decl *decl, bool *replaced,
                                       kiln_error *err);

#endif
