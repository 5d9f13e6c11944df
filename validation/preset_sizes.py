"""Preset sizes as data: for each preset, one parameter dict per claim id.

Pure data (a Python literal, so it ships with the package without packaging
configuration); `validation.presets` reads and checks it. Adding a claim means
adding its entry to all three presets here.

- smoke: seconds per claim; used by the tests.
- quick: the default; the whole registry in under 15 minutes on a 2-core CPU.
- paper: the reference's §0.5 sizes (d=5, L=40, sigma2=0.1, H up to 8; 500k Adam
  steps, batch 256, 20k evaluation prompts where a claim trains); a GPU is advised.
"""

PRESETS = {
    "smoke": {
        "HE-T4.2ii": {
            "d": 5, "L": 40, "sigma2": 0.1, "H": 3,  # H=3 already holds one head of each kind
            "omega_min": 0.05, "omega_max": 0.6, "n_omega": 3,  # geometric omega grid
            "gtol": 1e-13,  # optimiser's gradient-norm tolerance
            "rtol": 1e-6,  # tolerance above the optimiser's error bounds (see the justification)
        },
        "HE-MAN": {
            "d": 5, "L": 40, "sigma2": 0.1,
            "n_trials": 4, "H_max": 5,  # random H in [2, H_max], random +/-/0 partition
            "omega_min": 0.05, "omega_max": 0.6,  # omega log-uniform in this range
            "design_seed": 2025,  # draws the trials (the setting), not the optimiser's starts
            "gtol": 1e-13, "rtol": 1e-6,
        },
    },
    "quick": {
        "HE-T4.2ii": {
            "d": 5, "L": 40, "sigma2": 0.1, "H": 3,
            "omega_min": 0.05, "omega_max": 1.0, "n_omega": 16, "gtol": 1e-13, "rtol": 1e-6,
        },
        "HE-MAN": {
            "d": 5, "L": 40, "sigma2": 0.1,
            "n_trials": 40, "H_max": 8, "omega_min": 0.05, "omega_max": 0.6,
            "design_seed": 2025, "gtol": 1e-13, "rtol": 1e-6,
        },
    },
    "paper": {
        "HE-T4.2ii": {
            "d": 5, "L": 40, "sigma2": 0.1, "H": 4,  # 81 head patterns per omega
            "omega_min": 0.03, "omega_max": 1.0, "n_omega": 40, "gtol": 1e-13, "rtol": 1e-6,
        },
        "HE-MAN": {
            "d": 5, "L": 40, "sigma2": 0.1,
            "n_trials": 200, "H_max": 8, "omega_min": 0.03, "omega_max": 0.6,
            "design_seed": 2025, "gtol": 1e-13, "rtol": 1e-6,
        },
    },
}
