"""The compared models: which network, which slot representation, IRFC on or off."""

from __future__ import annotations

from dataclasses import dataclass

from repro.papers.biodynaspec.models import SlotDiffusion, WindowFlow


@dataclass(frozen=True)
class ModelSpec:
    label: str
    network: str
    representation: str
    irfc: bool


MODELS = {
    "biodynaspec": ModelSpec("BioDynaSpec (IWFD + band AR + IRFC)", "slot_diffusion", "spectral", True),
    "biodynaspec_noirfc": ModelSpec("BioDynaSpec without IRFC", "slot_diffusion", "spectral", False),
    "time_ar": ModelSpec("time-domain AR diffusion", "slot_diffusion", "time", True),
    "flow": ModelSpec("MDGen-style flow matching", "flow", "time", False),
    "static": ModelSpec("copy frame 0", "none", "time", False),
}
LEARNED = [name for name, spec in MODELS.items() if spec.network != "none"]


def n_slots(representation: str, window: int) -> tuple[int, int]:
    """(slots, features per slot) of a window of ``window`` frames."""
    return (window // 2 + 1, 6) if representation == "spectral" else (window, 3)


def build_network(name: str, settings: dict):
    """The untrained network of model ``name`` with the paper section's sizes."""
    spec = MODELS[name]
    slots, feats = n_slots(spec.representation, settings["window"])
    if spec.network == "slot_diffusion":
        return SlotDiffusion(
            slots,
            feats,
            settings["d_model"],
            settings["layers"],
            settings["heads"],
            spec.irfc,
            settings["irfc_kernels"],
            settings["diffusion_steps"],
        )
    return WindowFlow(slots, feats, settings["d_model"], settings["layers"], settings["heads"], settings["flow_steps"])
