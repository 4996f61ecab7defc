"""Hugging Face transformers architectures sealed by kiln.export (issue 26 point 5), at the
tiny sizes of tests/bench/transformers/export.py --tiny (hidden 16, one layer, random weights
from configs, nothing downloaded): each traces with torch.export strict over its named dims
(batch and sequence, or batch alone, or batch and a derived sample count), is imported and
proven by kiln, and matches eager PyTorch at the example and the domain's corners (kiln.export
compares them) and at one more point with a padded mask, compared here. Called as a user calls
it: with gradients enabled (T5's encoder once failed only then)."""
import os
import sys

import pytest

from conftest import SOURCE_ROOT, numpy, torch

import kiln

pytest.importorskip("transformers")
pytest.importorskip("onnxscript")
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "bench", "transformers"))
import export as models  # noqa: E402 - tests/bench/transformers/export.py: the configs, inputs and dims

models.Size.tiny()

# The dims each model's artifact declares, as its dynamic_shapes name them.
EXPECTED_DIMS = {
    "bert": ["batch", "seq"], "gpt2": ["batch", "seq"], "llama": ["batch", "seq"], "t5": ["batch", "seq"],
    "vit": ["batch"], "whisper_encoder": ["batch"], "wav2vec2": ["batch", "tens"],
}


@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_a_transformers_model_seals_strict_and_matches_eager(name):
    torch.manual_seed(0)
    model, make_inputs, dynamic_shapes = models.MODELS[name]()
    model.eval()
    assert torch.is_grad_enabled()
    artifact = kiln.export(model, (), make_inputs(*models.SHAPES[0]), dynamic_shapes=dynamic_shapes, strict=True)
    program = artifact.load()
    assert [d.name for d in program.dims] == EXPECTED_DIMS[name]
    cases = [c for c in artifact.evidence if c["results"] is not None]
    assert len(cases) == 1 + 2 ** len(EXPECTED_DIMS[name])  # the example and every corner
    assert all(r["passed"] for case in cases for r in case["results"])
    # One more point, inside the domain and on no corner, with a padded mask where there is one.
    batch, seq, padded = models.SHAPES[1]
    torch.manual_seed(1)
    inputs = make_inputs(batch, seq, padded=padded)
    with torch.no_grad():
        expected = [t.numpy() for t in models.leaves(model(**inputs))]
    got = list(program.run(**{n: t.numpy() for n, t in inputs.items()}).values())
    assert [g.shape for g in got] == [e.shape for e in expected]
    for g, e in zip(got, expected):
        numpy.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
