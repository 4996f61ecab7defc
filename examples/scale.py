#!/usr/bin/python3
"""The seed example with kiln in place of torch.export: y = 2*x + 1 for
x: float64[batch, 2], batch declared in 2..4.

kiln.export traces the module, proves its shape rules over the whole
declared domain, runs the eager module at the example and at the domain's
corners and seals those cases as evidence; the artifact is saved, loaded
back, run on ones of shape (3, 2), and batch 5 is refused by the contract.

    examples/scale.py [OUT.kiln]      # Debian's /usr/bin/python3, which has torch

Without `kiln` installed it uses the build tree of scripts/example (build/python).
"""
import os
import sys
import tempfile

import numpy
import torch

try:
    import kiln
except ImportError:  # not installed: the package scripts/example built
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "python"))
    import kiln


class Scale(torch.nn.Module):
    def forward(self, x):
        return 2 * x + 1


def main(path):
    batch = kiln.Dim("batch", min=2, max=4)
    artifact = kiln.export(Scale(), (torch.ones(2, 2, dtype=torch.float64),),
                           dynamic_shapes={"x": {0: batch}},
                           checks={"x": kiln.Check(range=(-1e6, 1e6), finite=True)})
    artifact.save(path)
    program = kiln.load(path)
    out = program.run(x=numpy.ones((3, 2)))
    print("shape", tuple(out["y"].shape))
    print("first row", out["y"][0].tolist())
    try:
        program.run(x=numpy.ones((5, 2)))
    except kiln.ContractError as refused:
        print(refused)
    else:
        sys.exit("batch 5 ran: the contract should have refused it")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        with tempfile.TemporaryDirectory(prefix="kiln-scale-") as directory:
            main(os.path.join(directory, "scale.kiln"))
