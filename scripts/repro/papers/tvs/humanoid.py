"""The CMU humanoid of dm-control (``suite/humanoid_CMU.xml`` and its ``common/`` includes, read from the wheel).

Contacts are disabled and the free root is driven by residual forces (the residual force control of UHC, one of
the paper's policies), so inverse dynamics has no contact terms (the pitfall the brief names: MuJoCo's soft
contact model would make TVS depend on contact parameters and foot-floor alignment).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from repro.workflow.io import InputError

XML = "dm_control/suite/humanoid_CMU.xml"
INCLUDES = (
    "dm_control/suite/common/skybox.xml",
    "dm_control/suite/common/visual.xml",
    "dm_control/suite/common/materials.xml",
)
ROOT_DOFS = 6
JOINT_GROUPS = {
    "legs": ("lfemur", "ltibia", "lfoot", "ltoes", "rfemur", "rtibia", "rfoot", "rtoes"),
    "spine": ("lowerback", "upperback", "thorax", "lowerneck", "upperneck", "head"),
    "arms": (
        "lclavicle",
        "lhumerus",
        "lradius",
        "lwrist",
        "lhand",
        "lfingers",
        "lthumb",
        "rclavicle",
        "rhumerus",
        "rradius",
        "rwrist",
        "rhand",
        "rfingers",
        "rthumb",
    ),
}


@dataclass
class Humanoid:
    """A compiled model and the index maps the TVS and the controllers use."""

    model: object
    hinge_qpos: np.ndarray  # qpos index of every hinge joint
    hinge_dof: np.ndarray  # dof index of the same joints
    act_dof: np.ndarray  # dof each actuator drives
    gear: np.ndarray  # per actuator
    dof_gear: np.ndarray  # gear of the actuator on each hinge dof (hinge order)
    joint_names: list[str]
    body_names: list[str]
    body_group: np.ndarray  # group index (JOINT_GROUPS order, -1 for root/hips) per body after the world


def model_path(package: str | Path) -> Path:
    root = Path(package)
    for member in (XML, *INCLUDES):
        if not (root / member).is_file():
            raise InputError(root / member, "missing from the extracted dm-control package files")
    return root / XML


def load(package: str | Path, timestep: float) -> Humanoid:
    """Compile humanoid_CMU.xml with contacts disabled and the given time step."""
    import mujoco

    path = model_path(package)
    try:
        model = mujoco.MjModel.from_xml_path(str(path))
    except ValueError as err:
        raise InputError(path, f"MuJoCo cannot compile the model ({err})") from err
    model.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    model.opt.timestep = timestep
    hinges = [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    hinge_dof = model.jnt_dofadr[hinges]
    act_dof = model.jnt_dofadr[model.actuator_trnid[:, 0]]
    gear = model.actuator_gear[:, 0].copy()
    by_dof = dict(zip(act_dof.tolist(), gear.tolist(), strict=True))
    bodies = [model.body(b).name for b in range(1, model.nbody)]
    group = np.array([next((g for g, (_, names) in enumerate(JOINT_GROUPS.items()) if b in names), -1) for b in bodies])
    return Humanoid(
        model=model,
        hinge_qpos=model.jnt_qposadr[hinges],
        hinge_dof=hinge_dof,
        act_dof=act_dof,
        gear=gear,
        dof_gear=np.array([by_dof[d] for d in hinge_dof.tolist()]),
        joint_names=[model.joint(j).name for j in hinges],
        body_names=bodies,
        body_group=group,
    )
