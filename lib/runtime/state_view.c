/* state_view.c — see state_view.h. */
#include "state_view.h"

#include <stdatomic.h>

#include "state_decl.h"

static _Atomic uint64_t packs;

void kiln_value_view_begin(kiln_value_view *view, kiln_tensor *value, const kiln_state_buffer *state, int64_t rows)
{
    const kiln_state_decl *decl = state->decl;
    int64_t stride = 1;
    for (uint32_t a = decl->rank; a-- > 0;) {
        view->strides[a] = stride;
        stride *= decl->shape[a];
    }
    view->state = state;
    view->rows = rows;
    view->slot = value->data;
    value->data = state->data;
}

void kiln_value_view_pack(kiln_value_view *view, kiln_tensor *value)
{
    if (!view->state)
        return;
    kiln_state_decl_copy_rows(view->state->decl, view->state->data, view->rows, view->slot);
    value->data = view->slot;
    view->state = NULL;
    atomic_fetch_add(&packs, 1);
}

uint64_t kiln_state_view_packs(void)
{
    return atomic_load(&packs);
}
