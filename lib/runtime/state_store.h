/*
 * state_store.h — a program's state tensors held for sessions (the
 * public kiln_state): one buffer per declared state, the lengths, and the
 * claim a run takes on them.
 *
 * Why apart from the session: a generative program runs as several
 * methods (prefill, decode) over one cache, so the storage outlives any
 * one method's session and is handed to each (kiln_session_options.state);
 * a session given none makes its own. One run at a time may use a store:
 * a run takes it with an atomic flag and a second concurrent run is
 * refused, never allowed to interleave appends.
 */
#ifndef KILN_LIB_STATE_STORE_H
#define KILN_LIB_STATE_STORE_H

#include <stdatomic.h>

#include <kiln/kiln.h>

#include "kernel_context.h"
#include "program.h"

struct kiln_state {
    const kiln_program *root; /* the program (its root) whose states these are */
    kiln_state_buffer *buffers; /* one per root->model.states, in its order */
    uint32_t count;
    atomic_bool in_use;
};

/*
 * Take `state` for one run (of a session that checked, when it was made,
 * that the state is its program's): refused when another run holds it.
 */
kiln_status kiln_state_acquire(kiln_state *state, kiln_error *err);

/* Give the state back after a run: commit each append's length when the run succeeded, else drop them. */
void kiln_state_release(kiln_state *state, bool succeeded);

#endif
