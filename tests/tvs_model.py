"""A tiny MJCF humanoid in the dm-control package layout, so TVS tests run without fetching the wheel."""

from pathlib import Path

XML = """<mujoco model="tiny">
  <compiler angle="radian"/>
  <include file="./common/skybox.xml"/>
  <include file="./common/visual.xml"/>
  <include file="./common/materials.xml"/>
  <default><joint limited="true" damping="0.1" armature="0.01"/><motor ctrllimited="true" ctrlrange="-1 1"/></default>
  <worldbody>
    <body name="root" pos="0 0 1">
      <freejoint name="root"/>
      <geom type="capsule" size="0.1 0.2" mass="10"/>
      <body name="lfemur" pos="0 0.1 -0.2">
        <joint name="lfemurrx" axis="1 0 0" range="-2 2"/>
        <joint name="lfemurrz" axis="0 0 1" range="-1 1"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.05" mass="3"/>
        <body name="ltibia" pos="0 0 -0.4">
          <joint name="ltibiarx" axis="1 0 0" range="0 2.5"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.04" mass="2"/>
        </body>
      </body>
      <body name="thorax" pos="0 0 0.2">
        <joint name="thoraxrx" axis="1 0 0" range="-1 1"/>
        <geom type="sphere" size="0.1" mass="5"/>
        <body name="lhumerus" pos="0 0.15 0">
          <joint name="lhumerusrz" axis="0 0 1" range="-1.5 1.5"/>
          <geom type="capsule" fromto="0 0 0 0 0.3 0" size="0.03" mass="1.5"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="lfemurrx" joint="lfemurrx" gear="120"/>
    <motor name="lfemurrz" joint="lfemurrz" gear="80"/>
    <motor name="ltibiarx" joint="ltibiarx" gear="80"/>
    <motor name="thoraxrx" joint="thoraxrx" gear="60"/>
    <motor name="lhumerusrz" joint="lhumerusrz" gear="40"/>
  </actuator>
</mujoco>
"""


def write_package(root: Path, xml: str = XML) -> Path:
    """The dm-control member layout under ``root`` holding ``xml`` as humanoid_CMU.xml."""
    suite = root / "dm_control" / "suite"
    (suite / "common").mkdir(parents=True, exist_ok=True)
    (suite / "humanoid_CMU.xml").write_text(xml)
    for name in ("skybox", "visual", "materials"):
        (suite / "common" / f"{name}.xml").write_text("<mujoco><visual/></mujoco>")
    return root
