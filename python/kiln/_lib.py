"""The C library, loaded with ctypes: structs mirrored field by field and
every function the package calls declared with its argument and result
types. Each struct whose C side records its size (``struct_size``) is
filled by ``init``, which hands the library this binding's own size of
it: the library accepts any size from the struct's 1.0 size up (kiln.h's
conventions), so the binding and a newer library work together.

Where the libraries are: ``KILN_LIBRARY_DIR`` if set (a directory holding
libkiln.so and libkiln-onnx.so), else the paths meson wrote into
``_paths.py`` when it built or installed this package.
"""
import ctypes
import os

from . import _paths

c_int64_p = ctypes.POINTER(ctypes.c_int64)

ERROR_MESSAGE_SIZE = 512
MAX_RANK = 8


class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * ERROR_MESSAGE_SIZE)]


class Limits(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("max_sections", ctypes.c_uint32),
        ("max_string_length", ctypes.c_uint32),
        ("max_metadata", ctypes.c_uint32),
        ("max_dims", ctypes.c_uint32),
        ("max_expr_nodes", ctypes.c_uint32),
        ("max_inputs", ctypes.c_uint32),
        ("max_outputs", ctypes.c_uint32),
        ("max_weights", ctypes.c_uint32),
        ("max_nodes", ctypes.c_uint32),
        ("max_node_inputs", ctypes.c_uint32),
        ("max_opset_entries", ctypes.c_uint32),
        ("max_values", ctypes.c_uint32),
        ("max_attributes", ctypes.c_uint32),
        ("max_weight_bytes", ctypes.c_uint64),
        ("max_decompressed_bytes", ctypes.c_uint64),
        ("max_arena_bytes", ctypes.c_uint64),
        ("max_decompressed_program_bytes", ctypes.c_uint64),
        ("max_proof_steps", ctypes.c_uint64),
        ("max_replay_nodes", ctypes.c_uint64),
        ("max_methods", ctypes.c_uint32),
    ]


class PublicKey(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint8 * 32)]


class SecretKey(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint8 * 64)]


PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64)


class LoadOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("verify", ctypes.c_int),
        ("limits", ctypes.POINTER(Limits)),
        ("trusted_keys", ctypes.POINTER(PublicKey)),
        ("trusted_key_count", ctypes.c_uint32),
        ("require_signature", ctypes.c_bool),
        ("progress", ctypes.c_void_p),
        ("progress_user", ctypes.c_void_p),
    ]


class DimBound(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("min", ctypes.c_int64), ("max", ctypes.c_int64)]


class SessionOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("threads", ctypes.c_uint32),
        ("skip_input_checks", ctypes.c_bool),
        ("reference_kernels", ctypes.c_bool),
        ("dims", ctypes.POINTER(DimBound)),
        ("dim_count", ctypes.c_uint32),
        ("max_arena_bytes", ctypes.c_uint64),
        ("thread_policy", ctypes.c_int),  # kiln_thread_policy: 0 adaptive, 1 fixed
        ("profile", ctypes.c_bool),
        ("state", ctypes.c_void_p),  # kiln_state *: shared by the sessions of a program's methods
    ]


TOKEN_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int64)


class GenerateOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("prefill_method", ctypes.c_char_p),
        ("decode_method", ctypes.c_char_p),
        ("ids_input", ctypes.c_char_p),
        ("position_input", ctypes.c_char_p),
        ("mask_input", ctypes.c_char_p),
        ("logits_output", ctypes.c_char_p),
        ("max_tokens", ctypes.c_uint32),
        ("temperature", ctypes.c_double),
        ("top_k", ctypes.c_uint32),
        ("seed", ctypes.c_uint64),
        ("stop_token", ctypes.c_int64),
        ("threads", ctypes.c_uint32),
        ("thread_policy", ctypes.c_int),
        ("on_token", TOKEN_CALLBACK),
        ("user", ctypes.c_void_p),
        ("forced_tokens", ctypes.POINTER(ctypes.c_int64)),
    ]


class GenerationCase(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("prefill_method", ctypes.c_char_p),
        ("decode_method", ctypes.c_char_p),
        ("prompt", ctypes.POINTER(ctypes.c_int64)),
        ("prompt_length", ctypes.c_uint32),
        ("tokens", ctypes.POINTER(ctypes.c_int64)),
        ("token_count", ctypes.c_uint32),
        ("margin", ctypes.c_double),
    ]


class GenerationResult(ctypes.Structure):
    _fields_ = [
        ("passed", ctypes.c_bool),
        ("matched", ctypes.c_uint32),
        ("expected", ctypes.c_int64),
        ("chosen", ctypes.c_int64),
        ("expected_logit", ctypes.c_double),
        ("chosen_logit", ctypes.c_double),
    ]


class NodeProfile(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("op", ctypes.c_char_p),
        ("path", ctypes.c_int),
        ("applied_activation", ctypes.c_bool),
        ("fused_into", ctypes.c_uint32),
        ("runs", ctypes.c_uint64),
        ("fused_runs", ctypes.c_uint64),
        ("nanoseconds", ctypes.c_uint64),
        ("min_nanoseconds", ctypes.c_uint64),
        ("dtype", ctypes.c_int),
        ("rank", ctypes.c_uint32),
        ("shape", ctypes.c_int64 * MAX_RANK),
    ]


class ProfileSummary(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("node_count", ctypes.c_uint32),
        ("runs", ctypes.c_uint64),
        ("nanoseconds", ctypes.c_uint64),
        ("node_nanoseconds", ctypes.c_uint64),
    ]


class SaveOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("compression_level", ctypes.c_int),
        ("timestamp", ctypes.c_int64),
        ("progress", ctypes.c_void_p),
        ("store_memory_plan", ctypes.c_bool),
        ("progress_user", ctypes.c_void_p),
        ("reader_limits", ctypes.c_void_p),
    ]


class DimInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("min", ctypes.c_int64), ("max", ctypes.c_int64),
                ("multiple_of", ctypes.c_int64)]


class IoInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_uint32)]


class InputCheck(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("has_range", ctypes.c_bool),
        ("min", ctypes.c_double),
        ("max", ctypes.c_double),
        ("finite_only", ctypes.c_bool),
        ("category_count", ctypes.c_uint32),
        ("categories", c_int64_p),
        ("unit", ctypes.c_char_p),
        ("description", ctypes.c_char_p),
    ]


class CompareRule(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("atol", ctypes.c_double), ("rtol", ctypes.c_double),
                ("nan_equal", ctypes.c_bool)]


class EvidenceCase(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("input_count", ctypes.c_uint32),
        ("input_names", ctypes.POINTER(ctypes.c_char_p)),
        ("inputs", ctypes.POINTER(ctypes.c_void_p)),
        ("output_count", ctypes.c_uint32),
        ("output_names", ctypes.POINTER(ctypes.c_char_p)),
        ("expected", ctypes.POINTER(ctypes.c_void_p)),
        ("rules", ctypes.POINTER(CompareRule)),
    ]


class EvidenceResult(ctypes.Structure):
    _fields_ = [
        ("output", ctypes.c_char_p),
        ("rule", CompareRule),
        ("passed", ctypes.c_bool),
        ("elements", ctypes.c_uint64),
        ("mismatches", ctypes.c_uint64),
        ("max_abs_error", ctypes.c_double),
        ("max_rel_error", ctypes.c_double),
    ]


class SignatureInfo(ctypes.Structure):
    _fields_ = [("state", ctypes.c_int), ("key_id", ctypes.c_uint8 * 16)]


class ProblemInfo(ctypes.Structure):
    _fields_ = [("severity", ctypes.c_int), ("status", ctypes.c_int), ("code", ctypes.c_char_p),
                ("location", ctypes.c_char_p), ("message", ctypes.c_char_p)]


class SectionInfo(ctypes.Structure):
    _fields_ = [("type", ctypes.c_char * 5), ("critical", ctypes.c_bool), ("compressed", ctypes.c_bool),
                ("version", ctypes.c_uint16), ("offset", ctypes.c_uint64), ("stored_size", ctypes.c_uint64),
                ("raw_size", ctypes.c_uint64), ("crc32", ctypes.c_uint32)]


class OpUse(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("version", ctypes.c_uint32), ("nodes", ctypes.c_uint32)]


class WeightInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int), ("dtype", ctypes.c_int), ("rank", ctypes.c_uint32),
                ("shape", c_int64_p), ("byte_size", ctypes.c_uint64)]


class NodeInfo(ctypes.Structure):
    _fields_ = [("op", ctypes.c_char_p), ("op_version", ctypes.c_uint32), ("input_count", ctypes.c_uint32)]


class OnnxDim(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("min", ctypes.c_int64), ("max", ctypes.c_int64),
                ("multiple_of", ctypes.c_int64)]


class OnnxState(ctypes.Structure):
    _fields_ = [("input", ctypes.c_char_p), ("output", ctypes.c_char_p), ("name", ctypes.c_char_p)]


class OnnxOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("program_name", ctypes.c_char_p),
        ("dims", ctypes.POINTER(OnnxDim)),
        ("dim_count", ctypes.c_uint32),
        ("external_data_dir", ctypes.c_char_p),
        ("known_input_count", ctypes.c_uint32),
        ("known_input_names", ctypes.c_void_p),
        ("known_inputs", ctypes.c_void_p),
        ("limits", ctypes.c_void_p),
        ("non_strict", ctypes.c_bool),
        ("states", ctypes.POINTER(OnnxState)),
        ("state_count", ctypes.c_uint32),
        ("state_capacity", ctypes.c_int64),
        ("state_axis", ctypes.c_int32),
        ("state_length_dim", ctypes.c_char_p),
    ]


P = ctypes.c_void_p  # every opaque handle (program, session, tensor, builder, report, ...)
ERR = ctypes.POINTER(Error)
STATUS = ctypes.c_int

# name: (result type, argument types)
_KILN = {
    "kiln_strerror": (ctypes.c_char_p, [STATUS]),
    "kiln_version": (ctypes.c_char_p, []),
    "kiln_dtype_name": (ctypes.c_char_p, [ctypes.c_int]),
    "kiln_dtype_size": (ctypes.c_size_t, [ctypes.c_int]),
    "kiln_format_bytes": (ctypes.c_int, [ctypes.c_uint64, ctypes.c_char_p, ctypes.c_size_t]),
    "kiln_tensor_wrap": (STATUS, [ctypes.c_int, ctypes.c_uint32, c_int64_p, P, ctypes.c_size_t,
                                  ctypes.POINTER(P), ERR]),
    "kiln_tensor_rewrap": (STATUS, [P, ctypes.c_int, ctypes.c_uint32, c_int64_p, P, ctypes.c_size_t, ERR]),
    "kiln_tensor_free": (None, [P]),
    "kiln_tensor_dtype": (ctypes.c_int, [P]),
    "kiln_tensor_rank": (ctypes.c_uint32, [P]),
    "kiln_tensor_shape": (c_int64_p, [P]),
    "kiln_tensor_byte_size": (ctypes.c_size_t, [P]),
    "kiln_tensor_const_data": (P, [P]),
    "kiln_write_file_atomic": (STATUS, [ctypes.c_char_p, P, ctypes.c_size_t, ERR]),
    "kiln_limits_init": (None, [ctypes.POINTER(Limits), ctypes.c_size_t]),
    # builder
    "kiln_builder_new": (STATUS, [ctypes.c_char_p, ctypes.POINTER(P), ERR]),
    "kiln_builder_free": (None, [P]),
    "kiln_builder_add_method": (STATUS, [P, ctypes.c_char_p, P, ERR]),
    "kiln_builder_set_method_name": (STATUS, [P, ctypes.c_char_p, ERR]),
    "kiln_builder_set_metadata": (STATUS, [P, ctypes.c_char_p, ctypes.c_char_p, ERR]),
    "kiln_builder_add_dim": (STATUS, [P, ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64, ERR]),
    "kiln_builder_set_dim_multiple_of": (STATUS, [P, ctypes.c_char_p, ctypes.c_int64, ERR]),
    "kiln_builder_add_input": (STATUS, [P, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                        ctypes.POINTER(ctypes.c_uint32), ERR]),
    "kiln_builder_add_scalar": (STATUS, [P, ctypes.c_int, ctypes.c_double, ctypes.POINTER(ctypes.c_uint32), ERR]),
    "kiln_builder_add_op": (STATUS, [P, ctypes.c_char_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32),
                                     ctypes.POINTER(ctypes.c_uint32), ERR]),
    "kiln_builder_add_output": (STATUS, [P, ctypes.c_char_p, ctypes.c_uint32, ERR]),
    "kiln_input_check_init": (None, [ctypes.POINTER(InputCheck), ctypes.c_size_t]),
    "kiln_builder_set_input_check": (STATUS, [P, ctypes.c_char_p, ctypes.POINTER(InputCheck), ERR]),
    "kiln_builder_add_evidence": (STATUS, [P, ctypes.POINTER(EvidenceCase), ERR]),
    "kiln_save_options_init": (None, [ctypes.POINTER(SaveOptions), ctypes.c_size_t]),
    "kiln_builder_encode": (STATUS, [P, ctypes.POINTER(SaveOptions), ctypes.POINTER(P), ctypes.POINTER(ctypes.c_size_t),
                                     ERR]),
    # loading
    "kiln_load_options_init": (None, [ctypes.POINTER(LoadOptions), ctypes.c_size_t]),
    "kiln_program_load": (STATUS, [ctypes.c_char_p, ctypes.POINTER(LoadOptions), ctypes.POINTER(P), ctypes.POINTER(P),
                                   ERR]),
    "kiln_program_load_memory": (STATUS, [P, ctypes.c_size_t, ctypes.POINTER(LoadOptions), ctypes.POINTER(P),
                                          ctypes.POINTER(P), ERR]),
    "kiln_program_free": (None, [P]),
    "kiln_report_count": (ctypes.c_uint32, [P]),
    "kiln_report_problem": (None, [P, ctypes.c_uint32, ctypes.POINTER(ProblemInfo)]),
    "kiln_report_free": (None, [P]),
    # program description
    "kiln_program_name": (ctypes.c_char_p, [P]),
    "kiln_program_method_count": (ctypes.c_uint32, [P]),
    "kiln_program_method_at": (P, [P, ctypes.c_uint32]),
    "kiln_program_method_name": (ctypes.c_char_p, [P]),
    "kiln_program_method": (STATUS, [P, ctypes.c_char_p, ctypes.POINTER(P), ERR]),
    "kiln_program_state_count": (ctypes.c_uint32, [P]),
    "kiln_program_state_at": (STATUS, [P, ctypes.c_uint32, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_int),
                                       ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.POINTER(ctypes.c_int64)),
                                       ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_char_p), ERR]),
    "kiln_program_relation_count": (ctypes.c_uint32, [P]),
    "kiln_program_relation": (STATUS, [P, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t, ERR]),
    "kiln_state_new": (STATUS, [P, ctypes.POINTER(P), ERR]),
    "kiln_state_free": (None, [P]),
    "kiln_state_reset": (None, [P]),
    "kiln_state_length": (STATUS, [P, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64), ERR]),
    "kiln_state_read": (STATUS, [P, ctypes.c_char_p, ctypes.POINTER(P), ERR]),
    "kiln_state_set_length": (STATUS, [P, ctypes.c_char_p, ctypes.c_int64, ERR]),
    "kiln_state_write": (STATUS, [P, ctypes.c_char_p, P, ERR]),
    "kiln_generate_options_init": (None, [ctypes.POINTER(GenerateOptions), ctypes.c_size_t]),
    "kiln_generator_new": (STATUS, [P, ctypes.POINTER(GenerateOptions), ctypes.POINTER(P), ERR]),
    "kiln_generator_free": (None, [P]),
    "kiln_generator_run": (STATUS, [P, ctypes.POINTER(ctypes.c_int64), ctypes.c_uint32,
                                    ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_uint32), ERR]),
    "kiln_generator_logits": (P, [P]),
    "kiln_builder_add_generation": (STATUS, [P, ctypes.POINTER(GenerationCase), ERR]),
    "kiln_program_generation_count": (ctypes.c_uint32, [P]),
    "kiln_program_generation": (ctypes.c_bool, [P, ctypes.c_uint32, ctypes.POINTER(GenerationCase)]),
    "kiln_program_replay_generation": (STATUS, [P, ctypes.c_uint32, ctypes.POINTER(GenerationResult), ERR]),
    "kiln_session_state": (P, [P]),
    "kiln_program_input_count": (ctypes.c_uint32, [P]),
    "kiln_program_input": (None, [P, ctypes.c_uint32, ctypes.POINTER(IoInfo)]),
    "kiln_program_output_count": (ctypes.c_uint32, [P]),
    "kiln_program_output": (None, [P, ctypes.c_uint32, ctypes.POINTER(IoInfo)]),
    "kiln_program_input_shape_text": (ctypes.c_int, [P, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t]),
    "kiln_program_output_shape_text": (ctypes.c_int, [P, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t]),
    "kiln_program_dim_count": (ctypes.c_uint32, [P]),
    "kiln_program_dim": (None, [P, ctypes.c_uint32, ctypes.POINTER(DimInfo)]),
    "kiln_program_metadata_count": (ctypes.c_uint32, [P]),
    "kiln_program_metadata": (None, [P, ctypes.c_uint32, ctypes.POINTER(ctypes.c_char_p),
                                     ctypes.POINTER(ctypes.c_char_p)]),
    "kiln_program_input_check": (ctypes.c_bool, [P, ctypes.c_uint32, ctypes.POINTER(InputCheck)]),
    "kiln_program_signature": (None, [P, ctypes.POINTER(SignatureInfo)]),
    "kiln_program_arena_bytes": (ctypes.c_uint64, [P]),
    "kiln_program_session_arena": (STATUS, [P, ctypes.POINTER(SessionOptions), ctypes.POINTER(ctypes.c_uint64),
                                            ERR]),
    "kiln_program_evidence_count": (ctypes.c_uint32, [P]),
    "kiln_program_evidence_name": (ctypes.c_char_p, [P, ctypes.c_uint32]),
    "kiln_program_evidence_output_count": (ctypes.c_uint32, [P, ctypes.c_uint32]),
    "kiln_program_replay_evidence": (STATUS, [P, ctypes.c_uint32, ctypes.POINTER(EvidenceResult), ERR]),
    "kiln_program_mode": (ctypes.c_int, [P]),
    "kiln_program_is_strict": (ctypes.c_bool, [P]),
    "kiln_program_identity": (None, [P, ctypes.c_int, ctypes.c_uint8 * 32]),
    "kiln_program_input_axis_text": (ctypes.c_int, [P, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_char_p,
                                                    ctypes.c_size_t]),
    "kiln_program_output_axis_text": (ctypes.c_int, [P, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_char_p,
                                                     ctypes.c_size_t]),
    "kiln_program_derived_dim_count": (ctypes.c_uint32, [P]),
    "kiln_program_derived_dim": (ctypes.c_int, [P, ctypes.c_uint32, ctypes.POINTER(ctypes.c_char_p), ctypes.c_char_p,
                                                ctypes.c_size_t]),
    "kiln_program_runtime_guard_count": (ctypes.c_uint32, [P]),
    "kiln_program_runtime_guard": (ctypes.c_char_p, [P, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32)]),
    "kiln_program_node_count": (ctypes.c_uint32, [P]),
    "kiln_program_node": (None, [P, ctypes.c_uint32, ctypes.POINTER(NodeInfo)]),
    "kiln_program_node_name": (ctypes.c_char_p, [P, ctypes.c_uint32]),
    "kiln_program_op_use_count": (ctypes.c_uint32, [P]),
    "kiln_program_op_use": (None, [P, ctypes.c_uint32, ctypes.POINTER(OpUse)]),
    "kiln_program_weight_count": (ctypes.c_uint32, [P]),
    "kiln_program_weight": (None, [P, ctypes.c_uint32, ctypes.POINTER(WeightInfo)]),
    "kiln_program_memory_plan_stored": (ctypes.c_bool, [P]),
    "kiln_program_intermediate_bytes": (ctypes.c_uint64, [P]),
    "kiln_program_evidence_output": (None, [P, ctypes.c_uint32, ctypes.c_uint32, ctypes.POINTER(ctypes.c_char_p),
                                            ctypes.POINTER(CompareRule)]),
    # artifacts opened for inspection
    "kiln_artifact_open": (STATUS, [ctypes.c_char_p, ctypes.POINTER(LoadOptions), ctypes.POINTER(P), ERR]),
    "kiln_artifact_open_memory": (STATUS, [P, ctypes.c_size_t, ctypes.POINTER(LoadOptions), ctypes.POINTER(P), ERR]),
    "kiln_artifact_free": (None, [P]),
    "kiln_artifact_program": (P, [P]),
    "kiln_artifact_report": (P, [P]),
    "kiln_artifact_format_version": (None, [P, ctypes.POINTER(ctypes.c_uint16), ctypes.POINTER(ctypes.c_uint16)]),
    "kiln_artifact_file_size": (ctypes.c_uint64, [P]),
    "kiln_artifact_feature_bits": (ctypes.c_uint64, [P]),
    "kiln_artifact_digest": (None, [P, ctypes.c_uint8 * 32]),
    "kiln_artifact_signature": (None, [P, ctypes.POINTER(SignatureInfo)]),
    "kiln_artifact_section_count": (ctypes.c_uint32, [P]),
    "kiln_artifact_section": (None, [P, ctypes.c_uint32, ctypes.POINTER(SectionInfo)]),
    "kiln_artifact_find_section": (ctypes.c_int64, [P, ctypes.c_char_p]),
    # running
    "kiln_session_options_init": (None, [ctypes.POINTER(SessionOptions), ctypes.c_size_t]),
    "kiln_session_new": (STATUS, [P, ctypes.POINTER(SessionOptions), ctypes.POINTER(P), ERR]),
    "kiln_session_new_for_inputs": (STATUS, [P, ctypes.POINTER(SessionOptions), ctypes.c_uint32,
                                             ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_void_p),
                                             ctypes.POINTER(P), ERR]),
    "kiln_session_free": (None, [P]),
    "kiln_session_run_threads": (ctypes.c_uint32, [P]),
    "kiln_session_set_input": (STATUS, [P, ctypes.c_char_p, P, ERR]),
    "kiln_session_run": (STATUS, [P, ERR]),
    "kiln_session_output_count": (ctypes.c_uint32, [P]),
    "kiln_session_output": (P, [P, ctypes.c_uint32]),
    "kiln_session_output_name": (ctypes.c_char_p, [P, ctypes.c_uint32]),
    "kiln_session_arena_bytes": (ctypes.c_uint64, [P]),
    "kiln_session_threads": (ctypes.c_uint32, [P]),
    "kiln_session_profile_summary": (STATUS, [P, ctypes.POINTER(ProfileSummary), ERR]),
    "kiln_session_profile_node": (STATUS, [P, ctypes.c_uint32, ctypes.POINTER(NodeProfile), ERR]),
    "kiln_session_profile_reset": (None, [P]),
    "kiln_node_path_name": (ctypes.c_char_p, [ctypes.c_int]),
    # keys and signatures
    "kiln_key_generate": (STATUS, [ctypes.POINTER(PublicKey), ctypes.POINTER(SecretKey), ERR]),
    "kiln_key_id": (None, [ctypes.POINTER(PublicKey), ctypes.c_uint8 * 16]),
    "kiln_public_key_format": (ctypes.c_int, [ctypes.POINTER(PublicKey), ctypes.c_char_p, ctypes.c_size_t]),
    "kiln_secret_key_format": (ctypes.c_int, [ctypes.POINTER(SecretKey), ctypes.c_char_p, ctypes.c_size_t]),
    "kiln_public_key_parse": (STATUS, [ctypes.c_char_p, ctypes.POINTER(PublicKey), ERR]),
    "kiln_secret_key_parse": (STATUS, [ctypes.c_char_p, ctypes.POINTER(SecretKey), ERR]),
    "kiln_artifact_sign": (STATUS, [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(SecretKey),
                                    ctypes.POINTER(LoadOptions), ERR]),
}

_ONNX = {
    "kiln_onnx_options_init": (None, [ctypes.POINTER(OnnxOptions), ctypes.c_size_t]),
    "kiln_onnx_import_memory": (STATUS, [P, ctypes.c_size_t, ctypes.POINTER(OnnxOptions), ctypes.POINTER(P), ERR]),
    "kiln_onnx_result_free": (None, [P]),
    "kiln_onnx_result_builder": (P, [P]),
    "kiln_onnx_result_take_builder": (P, [P]),
    "kiln_onnx_result_unsupported_count": (ctypes.c_uint32, [P]),
    "kiln_onnx_result_unsupported": (ctypes.c_char_p, [P, ctypes.c_uint32]),
    "kiln_onnx_result_input_count": (ctypes.c_uint32, [P]),
    "kiln_onnx_result_input_onnx_name": (ctypes.c_char_p, [P, ctypes.c_uint32]),
    "kiln_onnx_result_input_kiln_name": (ctypes.c_char_p, [P, ctypes.c_uint32]),
}


def _library_path(name):
    directory = os.environ.get("KILN_LIBRARY_DIR")
    if directory:
        return os.path.join(directory, os.path.basename(getattr(_paths, name)))
    return getattr(_paths, name)


def _declare(library, table):
    for name, signature in table.items():
        if signature is None:
            continue
        function = getattr(library, name)
        function.restype, function.argtypes = signature[0], signature[1]


# The kiln_*_init function that fills each versioned struct, and the library that has it.
_INITS = {
    LoadOptions: ("kiln", "kiln_load_options_init"),
    SessionOptions: ("kiln", "kiln_session_options_init"),
    GenerateOptions: ("kiln", "kiln_generate_options_init"),
    SaveOptions: ("kiln", "kiln_save_options_init"),
    InputCheck: ("kiln", "kiln_input_check_init"),
    Limits: ("kiln", "kiln_limits_init"),
    OnnxOptions: ("onnx", "kiln_onnx_options_init"),
}


def init(struct_type):
    """A new `struct_type` (a versioned struct) holding the library's defaults,
    its struct_size this binding's size of it."""
    value = struct_type()
    library, function = _INITS[struct_type]
    getattr(globals()[library], function)(ctypes.byref(value), ctypes.sizeof(value))
    return value


# The onnx importer links libkiln.so itself; loading libkiln first with
# RTLD_GLOBAL makes both share one copy of kiln in the process.
kiln = ctypes.CDLL(_library_path("LIBKILN"), mode=ctypes.RTLD_GLOBAL)
_declare(kiln, _KILN)
try:
    onnx = ctypes.CDLL(_library_path("LIBKILN_ONNX"))
    _declare(onnx, _ONNX)
except OSError:  # a kiln built without the ONNX importer
    onnx = None

# The process's free(), the one libkiln's malloc() pairs with: looked up in the
# global scope (dlopen(NULL)), where a preloaded allocator (ASan, jemalloc)
# comes first. libc's own handle would give glibc's free, which aborts on
# memory such an allocator gave.
libc = ctypes.CDLL(None)
libc.free.argtypes = [ctypes.c_void_p]
libc.free.restype = None


def strerror(status):
    return kiln.kiln_strerror(status).decode()


def format_bytes(count):
    buffer = ctypes.create_string_buffer(32)
    kiln.kiln_format_bytes(count, buffer, len(buffer))
    return buffer.value.decode()
