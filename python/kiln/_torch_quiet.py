"""torch kept quiet while kiln.export traces and translates: kiln raises one error of its own
that says what went wrong, in place of torch's log lines and warnings."""
import contextlib
import logging
import warnings


@contextlib.contextmanager
def quiet_torch():
    """Silence torch's loggers and warnings while it traces: on a refused export torch._guards
    logs pages of internal stack before raising, and the ONNX exporter warns of missing
    torchvision; kiln raises one error of its own that says what went wrong."""
    saved = {}
    for name in list(logging.root.manager.loggerDict) + ["torch"]:
        if name == "torch" or name.startswith("torch."):
            logger = logging.getLogger(name)
            saved[name] = logger.level
            logger.setLevel(logging.CRITICAL + 1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)
