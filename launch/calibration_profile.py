"""A commscale calibration profile (src/predict/calibration.hpp) as the PyTorch scripts read it: the
--base they add their rows to."""

import json
import sys


def read_profile(path, script):
    """The profile at `path`, or exit 2 with `script`'s name and what is wrong."""
    try:
        with open(path) as f:
            profile = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        print(f"{script}: --base {path}: {e}", file=sys.stderr)
        sys.exit(2)
    if not isinstance(profile, dict) or profile.get("kind") != "commscale-calibration":
        print(f"{script}: --base {path}: not a commscale calibration profile", file=sys.stderr)
        sys.exit(2)
    return profile
