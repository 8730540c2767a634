#!/usr/bin/env python3
"""Write docs/foxglove-layout.json: the Foxglove layout for the live view (docs/live.md).

    .venv/bin/python scripts/make_foxglove_layout.py [--out docs/foxglove-layout.json]

The panels' configurations are built with the Foxglove SDK's layout classes
(``foxglove.layouts``: the key names are the SDK's), and arranged in the layout file
format Foxglove's *Layouts -> Import from file* reads (``configById`` + the split
tree ``layout``). tests/unit/test_foxglove_layout.py keeps the committed file equal
to this script's output and checks that every topic it names is one the live view
streams for the pool rigs (or, for the sonar, for rigs/acoustics.toml).

Panels (written for the pool rigs; each topic can be changed in the app):

- **3-D**: the scene (``/live/scene``: the pool, the tags, the overhead camera, the
  seabed of a scene file) and the frames (``/live/transforms``), following the
  vehicle (``vehicle/state``), shown in the z-up ``enu`` frame;
- **images**: the overhead (or deep-sea) camera's frames, ``/camera/image/foxglove``,
  and an imaging sonar's, ``/sonar/image/foxglove``;
- **plots**: depth (truth, estimate, set-point), the task error, the thruster forces.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import foxglove.layouts as fl

OUT = Path(__file__).resolve().parents[1] / "docs" / "foxglove-layout.json"
FOLLOW = "vehicle/state"
"""The frame the 3-D panel follows: the vehicle's (live.py: the topic without '/')."""


def _config(model: fl._BaseModel, title: str) -> dict:
    """A panel's configuration as the layout file holds it, with its title."""
    return {**json.loads(model.to_json()), "foxglovePanelTitle": title}


def _series(*paths: str) -> list[fl.PlotSeries]:
    return [fl.PlotSeries(value=p, enabled=True, timestamp_method="receiveTime") for p in paths]


def layout() -> dict:
    """The layout file's content (module docstring)."""
    three_d = fl.ThreeDeeConfig(
        follow_tf=FOLLOW, follow_mode="follow-position", fixed_frame="enu",
        camera_state=fl.ThreeDeeCameraState(distance=6.0, perspective=True, phi=55.0,
                                            theta_offset=-30.0, near=0.05, far=20000.0),
        topics={"/live/scene": fl.BaseRendererSceneUpdateTopicSettings(visible=True)},
        scene=fl.BaseRendererSceneSettings(
            background_color="#0b2a3c",
            transforms=fl.BaseRendererTransforms(show_label=True, axis_size=0.3)))
    plot = dict(show_legend=True, is_synced=True, x_axis_val="timestamp")
    configs = {
        "3D!scene": _config(three_d, "3-D scene"),
        "Image!camera": _config(fl.ImageConfig(image_mode=fl.ImageModeConfig(
            image_topic="/camera/image/foxglove")), "Camera"),
        "Image!sonar": _config(fl.ImageConfig(image_mode=fl.ImageModeConfig(
            image_topic="/sonar/image/foxglove")), "Imaging sonar (rigs with one)"),
        "Plot!depth": _config(fl.PlotConfig(paths=_series(
            "/vehicle/state.position_ned_m.z", "/ekf/navigation.position_ned_m.z",
            "/t1/setpoint.position_ned_m.z"), **plot), "Depth [m]: truth, estimate, set-point"),
        "Plot!error": _config(fl.PlotConfig(paths=_series(
            '/t1/error.signals[:]{name=="e_3d"}.value'), **plot), "Task error |e| [m]"),
        "Plot!thrust": _config(fl.PlotConfig(paths=_series(
            "/thrusters/feedback.thrusters[:].force_n"), show_legend=False, is_synced=True),
            "Thruster forces [N]"),
    }
    images = {"direction": "row", "first": "Image!camera", "second": "Image!sonar",
              "splitPercentage": 62}
    plots = {"direction": "column", "first": "Plot!depth",
             "second": {"direction": "row", "first": "Plot!error", "second": "Plot!thrust",
                        "splitPercentage": 50}, "splitPercentage": 50}
    return {
        "configById": configs,
        "globalVariables": {},
        "userNodes": {},
        "playbackConfig": {"speed": 1},
        "layout": {"direction": "row", "first": "3D!scene",
                   "second": {"direction": "column", "first": images, "second": plots,
                              "splitPercentage": 45},
                   "splitPercentage": 50},
    }


def text() -> str:
    return json.dumps(layout(), indent=2) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    out = ap.parse_args().out
    out.write_text(text())
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
