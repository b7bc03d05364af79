"""Policy factories for tests/test_export.py's ``--policy-factory`` tests: importing this module and
calling a factory is what an evaluation given ``NAME=tests.export_factories:FUNCTION`` does."""

import torch

from dragonstones_env.policies import from_callable, from_torch

CALLS: list[object] = []  # each factory call's seed, in this process


class Skip(torch.nn.Module):
    """Not a plain MLP: a torch module only from_torch can seat."""

    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(1194, 8)
        self.b = torch.nn.Linear(8, 1552)
        self.c = torch.nn.Linear(1194, 1552)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.tanh(self.a(x))) + self.c(x)


def torch_policy(seed=None):
    CALLS.append(seed)
    torch.manual_seed(0)
    return from_torch(Skip(), game="dragonstones", seed=seed)


def first_legal():
    return from_callable(lambda obs: int(obs["action_mask"].argmax()), game="dragonstones")


def not_a_policy():
    return 42


def broken():
    raise RuntimeError("the user's factory failed")
