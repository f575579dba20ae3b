"""raspcc models in Python: model.bin read into NumPy, run in NumPy or as a torch.nn.Module.

    import raspcc
    model = raspcc.load("model.bin")           # config, residual labels, dense float64 weights
    raspcc.run(model, list("hello"))           # output atoms, as rasprun prints them (hard attention)
    raspcc.run_weights(model, list("hello"))   # (outputs, flag): the weights alone, and the error flag
    net = raspcc.to_torch("model.bin")         # an ordinary transformer (softmax attention)

Modules: atoms (RASP values, printing and input parsing as the C tools do), container
(safetensors), model (load, Model, encode), machine (the forward pass in NumPy, the runtime's
checks and output decoding), torch_model (to_torch; needs PyTorch), beta (the inverse
temperature softmax attention needs), cli (the rasprun-compatible command line).
"""

from .atoms import InputError, RaspError, parse_input
from .model import Model, ModelError, load
from .machine import decode_plain, finish, forward, run, run_weights
from .beta import exact_beta, sufficient_beta

__all__ = ["InputError", "RaspError", "Model", "ModelError", "load", "parse_input", "run", "forward", "finish", "run_weights", "decode_plain",
           "sufficient_beta", "exact_beta", "to_torch"]


def to_torch(path_or_model, beta=None):
    """The model as a torch.nn.Module (see raspcc.torch_model.to_torch); imports PyTorch."""
    from .torch_model import to_torch as _to_torch

    return _to_torch(path_or_model, beta)
