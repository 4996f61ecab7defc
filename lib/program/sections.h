/*
 * sections.h — the program's section types. Each has its encoder and
 * decoder in section_<name>.c (section_meta.c, ...); section_encode.h
 * assembles them into an artifact, section_decode.h reads them back.
 * Byte layouts are normative in spec/format.md §7.
 */
#ifndef KILN_LIB_SECTIONS_H
#define KILN_LIB_SECTIONS_H

#include "format/container.h"

#define KILN_SECTION_META KILN_FOURCC('M', 'E', 'T', 'A') /* name, mode, metadata */
#define KILN_SECTION_OPST KILN_FOURCC('O', 'P', 'S', 'T') /* (op, version) table */
#define KILN_SECTION_DIMS KILN_FOURCC('D', 'I', 'M', 'S') /* dims + shape expressions */
#define KILN_SECTION_IOSG KILN_FOURCC('I', 'O', 'S', 'G') /* I/O signature */
#define KILN_SECTION_WTAB KILN_FOURCC('W', 'T', 'A', 'B') /* weights table */
#define KILN_SECTION_GRPH KILN_FOURCC('G', 'R', 'P', 'H') /* nodes */
#define KILN_SECTION_WDAT KILN_FOURCC('W', 'D', 'A', 'T') /* raw weight bytes */
#define KILN_SECTION_EVID KILN_FOURCC('E', 'V', 'I', 'D') /* evidence cases; ancillary, optional */
#define KILN_SECTION_CHKS KILN_FOURCC('C', 'H', 'K', 'S') /* semantic input checks; critical, optional */
/* Runtime guards of a non-strict program; critical, present exactly when
 * the program is non-strict. Format 1.1. */
#define KILN_SECTION_RGRD KILN_FOURCC('R', 'G', 'R', 'D')
/* The memory plan; ancillary, optional (kiln_save_options.store_memory_plan). Format 1.1. */
#define KILN_SECTION_PLAN KILN_FOURCC('P', 'L', 'A', 'N')

/* Node names (the source framework's, e.g. an ONNX node's); ancillary,
 * present when some node has a name. Format 1.2. */
#define KILN_SECTION_NNAM KILN_FOURCC('N', 'N', 'A', 'M')

/* A program's further entry points, each with its own dims, signature,
 * checks, guards, graph, names, evidence and plan over the shared weights;
 * critical, present exactly when the program has more than one method. Format 1.3. */
#define KILN_SECTION_MTHD KILN_FOURCC('M', 'T', 'H', 'D')

/* The program's state tensors (a KV cache), shared by its methods; critical,
 * present exactly when the program declares a state. Format 1.3. */
#define KILN_SECTION_STAT KILN_FOURCC('S', 'T', 'A', 'T')

/* Generation cases: prompts and the tokens greedy generation must make of
 * them, across methods; ancillary, optional. Format 1.3. */
#define KILN_SECTION_GENV KILN_FOURCC('G', 'E', 'N', 'V')

/* Every section type above is at version 1 (RGRD and PLAN since format
 * 1.1, NNAM since 1.2, MTHD and STAT since 1.3, the others since 1.0). */
#define KILN_PROGRAM_SECTION_VERSION 1
/* Offsets of tensors inside WDAT are multiples of this. */
#define KILN_WEIGHT_ALIGNMENT 64

#endif
