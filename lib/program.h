/* program.h — the loaded program behind the opaque public handle. */
#ifndef KILN_LIB_PROGRAM_H
#define KILN_LIB_PROGRAM_H

#include "format/container.h"
#include "format/file_io.h"
#include "model.h"

struct kiln_program {
    kiln_mapped_file file;  /* when loaded from a path */
    uint8_t *owned_bytes;   /* when loaded from memory */
    kiln_container container;
    kiln_model model;
    kiln_limits limits;
};

#endif
