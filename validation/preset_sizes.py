"""Preset sizes as data: for each preset, one parameter dict per claim id.

Pure data (a Python literal, so it ships with the package without packaging
configuration); `validation.presets` reads and checks it. Adding a claim means
adding its entry to all three presets here.

- smoke: seconds per claim; used by the tests.
- quick: the default; the whole registry in under 15 minutes on a 2-core CPU.
- paper: the reference's §0.5 sizes (d=5, L=40, sigma2=0.1, H up to 8; 500k Adam
  steps, batch 256, 20k evaluation prompts where a claim trains); a GPU is advised.
"""

# The trained ensemble of HE-OBS1..4 (validation/claims/_trained.py): one training per preset,
# shared by the four claims (identical "training" dicts give one cache key). Member e has
# heads[e] heads and init seed seed + e. Quick: Adam lr 3e-3 reaches the paired regime in ~3k
# steps (lr 1e-2 left omega higher at 3k steps; 1e-3 is the paper's, for 500k steps); logs every
# 25 steps resolve the early rise of |omega| (it peaks within the first few hundred steps).
_TRAINED_SMOKE = {
    "d": 5, "L": 40, "sigma2": 0.1, "heads": [1, 2, 2, 4], "lr": 1e-2, "steps": 300,
    "batch": 128, "seed": 0, "log_every": 10, "checkpoint_every": 100, "validation_batch": 512,
}
_TRAINED_QUICK = {
    "d": 5, "L": 40, "sigma2": 0.1, "heads": [1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 4, 8], "lr": 3e-3,
    "steps": 10_000, "batch": 256, "seed": 0, "log_every": 25, "checkpoint_every": 1000,
    "validation_batch": 1024,
}
_TRAINED_PAPER = {  # reference §0.5
    "d": 5, "L": 40, "sigma2": 0.1, "heads": [1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 4, 8, 8],
    "lr": 1e-3, "steps": 500_000, "batch": 256, "seed": 0, "log_every": 1000,
    "checkpoint_every": 10_000, "validation_batch": 4096,
}
_LENGTHS = list(range(10, 101, 5))  # test lengths L' of Figure 4


def _trained_claims(training, *, pattern_atol, lengths, n_prompts):
    """The entries of HE-OBS1..4 for one preset (one shared training)."""
    return {
        "HE-OBS1": {"training": training, "pattern_atol": pattern_atol, "show_heads": [1, 2, 4]},
        "HE-OBS2": {"training": training, "omega_max": 0.3},  # omega range of the manifold check
        "HE-OBS3": {
            "training": training, "lengths": lengths, "n_prompts": n_prompts,
            "compare_heads": [1, 2, 4], "dgd_rtol": 0.05,
        },
        "HE-OBS4": {"training": training, "show_heads": [1, 2, 4]},
    }


PRESETS = {
    "smoke": {
        **_trained_claims(_TRAINED_SMOKE, pattern_atol=0.05, lengths=[10, 40, 100], n_prompts=2048),
        "HE-P4.1": {
            "d": 5, "L": 40, "sigma2": 0.1,
            "omega_max": 0.6, "mu_max": 6.0, "n_omega": 6, "n_mu": 6,  # ± landscape grid
            "landscape_prompts": 4096,
            "gap_omega": 0.1, "gap_L": [20, 40, 80], "gap_prompts": 4096,  # gap on the manifold
        },
        "HE-4.9": {
            "d": 5, "L": 40, "sigma2": 0.1, "n_trials": 6, "H_max": 5,
            "omega_min": 0.02, "omega_max": 0.6, "design_seed": 2025, "n_prompts": 512,
        },
        "HE-4.12": {
            "d": 5, "L": 40, "sigma2": 0.1, "omega_min": 0.3, "omega_max": 0.75, "n_omega": 8,
            "n_prompts": 4096, "n_replicates": 3, "degree": 4,  # replicates give the SE
        },
        "HE-T4.2i": {
            "d": 5, "L": 40, "sigma2": 0.1, "eta": 0.879,  # eta = 2 omega mu held fixed
            "omega_min": 0.005, "omega_max": 0.05, "n_omega": 4, "n_prompts": 2048,
            "fixed_omega": 0.05, "L_values": [80, 160, 320],
        },
        "HE-4.3-RISK": {
            "sigma2": 0.1, "cases": [[5, 40], [2, 3]], "etas": [0.3],  # + both optimal steps
            "n_prompts": [8192, 16_384],  # per case
        },
        "HE-T4.2iii": {
            "cases": [[0.125, 0.1]], "d_values": [8, 16], "n_prompts": 2048,  # (xi, sigma2)
        },
        "HE-S1": {
            "d": 5, "L": 40, "sigma2": 0.1, "heads": [2, 4],  # H values run
            "n_seeds": 3, "scale": 0.01, "t_end": 300.0, "n_times": 120,  # N(0, scale^2) starts
            "tolerance": 0.01,  # zero-sum ratio / KQ dispersion thresholds
            "loss_gap_tolerance": 1e-3,  # Ltilde above Ltilde on S_omega counted as "on S_omega"
            "stage_one_min_heads": 4, "design_seed": 8,  # starts are the setting: shared by S1/S2
        },
        "HE-S2": {
            "d": 5, "L": 40, "sigma2": 0.1, "heads": [2, 4], "n_seeds": 3, "scale": 0.01,
            "t_end": 300.0, "n_times": 120, "tolerance": 0.01, "loss_gap_tolerance": 1e-3,
            "stage_one_min_heads": 4, "design_seed": 8,
        },
        "HE-B-INIT": {
            "d": 5, "L": 40, "sigma2": 0.1, "eps": 1e-3, "rtol": 1e-10,
            "init_t_end": 50.0,  # horizon of the symmetric full-vs-reduced comparison
            "n_asymmetric": 2, "asymmetry": 0.1, "asym_t_end": 300.0,  # perturbed starts
            "design_seed": 22,
        },
        "HE-B-PHASE1": {
            "d": 5, "L": 40, "sigma2": 0.1, "eps": 1e-3, "rtol": 1e-10, "t_end": 1e6,
            "train_eps": 0.02,  # Def. B.1 scale of the trained models (above SGD's batch noise)
            "sgd_lr": 0.02, "sgd_steps": 150, "adam_lr": 1e-3, "adam_steps": 100,
            "members": 2, "batch": 256, "train_records": 15,  # ensemble size, history points
            "compare_t": [1.0, 2.0, 3.0],  # flow times t = lr k where SGD meets the flow
        },
        "HE-B-PHASE2": {
            "d": 5, "L": 40, "sigma2": 0.1, "eps": 1e-3, "rtol": 1e-10, "t_end": 1e6,
            "high_d": [[100, 800]],  # further (d, L) rows (the bound is tight at large d)
        },
        "HE-B-PHASE3": {"d": 5, "L": 40, "sigma2": 0.1, "eps": 1e-3, "rtol": 1e-10, "t_end": 1e6},
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
        **_trained_claims(_TRAINED_QUICK, pattern_atol=0.05, lengths=_LENGTHS, n_prompts=16_384),
        "HE-P4.1": {
            "d": 5, "L": 40, "sigma2": 0.1,
            "omega_max": 0.6, "mu_max": 6.0, "n_omega": 24, "n_mu": 24,
            "landscape_prompts": 20_000,
            "gap_omega": 0.1, "gap_L": [20, 40, 80, 160, 320], "gap_prompts": 20_000,
        },
        "HE-4.9": {
            "d": 5, "L": 40, "sigma2": 0.1, "n_trials": 40, "H_max": 8,
            "omega_min": 0.02, "omega_max": 0.6, "design_seed": 2025, "n_prompts": 4096,
        },
        "HE-4.12": {
            "d": 5, "L": 40, "sigma2": 0.1, "omega_min": 0.3, "omega_max": 0.75, "n_omega": 10,
            "n_prompts": 20_000, "n_replicates": 8, "degree": 4,
        },
        "HE-T4.2i": {
            "d": 5, "L": 40, "sigma2": 0.1, "eta": 0.879,
            "omega_min": 0.005, "omega_max": 0.05, "n_omega": 6, "n_prompts": 40_000,
            "fixed_omega": 0.05, "L_values": [80, 160, 320, 640],
        },
        "HE-4.3-RISK": {
            "sigma2": 0.1, "cases": [[5, 40], [2, 3], [20, 60]], "etas": [0.3, 0.8],
            "n_prompts": [20_000, 200_000, 20_000],  # tiny L: heavy tails, cheap prompts
        },
        "HE-T4.2iii": {
            "cases": [[0.125, 0.1], [0.25, 0.5], [0.5, 3.0]], "d_values": [8, 16, 32],
            "n_prompts": 10_000,
        },
        "HE-S1": {
            "d": 5, "L": 40, "sigma2": 0.1, "heads": [2, 3, 4, 8], "n_seeds": 40, "scale": 0.01,
            "t_end": 1e4, "n_times": 200, "tolerance": 0.01, "loss_gap_tolerance": 1e-3,
            "stage_one_min_heads": 4, "design_seed": 8,
        },
        "HE-S2": {
            "d": 5, "L": 40, "sigma2": 0.1, "heads": [2, 3, 4, 8], "n_seeds": 40, "scale": 0.01,
            "t_end": 1e4, "n_times": 200, "tolerance": 0.01, "loss_gap_tolerance": 1e-3,
            "stage_one_min_heads": 4, "design_seed": 8,
        },
        "HE-B-INIT": {
            "d": 5, "L": 40, "sigma2": 0.1, "eps": 1e-3, "rtol": 1e-10,
            "init_t_end": 50.0, "n_asymmetric": 10, "asymmetry": 0.1, "asym_t_end": 1e3,
            "design_seed": 22,
        },
        "HE-B-PHASE1": {
            "d": 5, "L": 40, "sigma2": 0.1, "eps": 1e-3, "rtol": 1e-10, "t_end": 1e7,
            "train_eps": 0.02, "sgd_lr": 0.02, "sgd_steps": 1000, "adam_lr": 1e-3,
            "adam_steps": 1500, "members": 4, "batch": 256, "train_records": 50,
            "compare_t": [2.0, 4.0, 6.0, 8.0, 12.0, 20.0],
        },
        "HE-B-PHASE2": {
            "d": 5, "L": 40, "sigma2": 0.1, "eps": 1e-3, "rtol": 1e-10, "t_end": 1e7,
            "high_d": [[20, 160], [100, 800], [400, 3200]],
        },
        "HE-B-PHASE3": {"d": 5, "L": 40, "sigma2": 0.1, "eps": 1e-3, "rtol": 1e-10, "t_end": 1e7},
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
        **_trained_claims(_TRAINED_PAPER, pattern_atol=0.01, lengths=_LENGTHS, n_prompts=20_480),
        "HE-P4.1": {
            "d": 5, "L": 40, "sigma2": 0.1,
            "omega_max": 0.6, "mu_max": 6.0, "n_omega": 50, "n_mu": 50,
            "landscape_prompts": 200_000,  # the reference's 2e5 prompts per point
            "gap_omega": 0.1, "gap_L": [20, 40, 80, 160, 320, 640], "gap_prompts": 200_000,
        },
        "HE-4.9": {
            "d": 5, "L": 40, "sigma2": 0.1, "n_trials": 200, "H_max": 8,
            "omega_min": 0.02, "omega_max": 0.6, "design_seed": 2025, "n_prompts": 20_000,
        },
        "HE-4.12": {
            "d": 5, "L": 40, "sigma2": 0.1, "omega_min": 0.3, "omega_max": 0.75, "n_omega": 19,
            "n_prompts": 100_000, "n_replicates": 10, "degree": 4,  # 1e5 prompts as the reference
        },
        "HE-T4.2i": {
            "d": 5, "L": 40, "sigma2": 0.1, "eta": 0.879,
            "omega_min": 0.005, "omega_max": 0.05, "n_omega": 8, "n_prompts": 200_000,
            "fixed_omega": 0.05, "L_values": [80, 160, 320, 640, 1280],
        },
        "HE-4.3-RISK": {
            "sigma2": 0.1, "cases": [[5, 40], [2, 3], [20, 60], [50, 400]], "etas": [0.3, 0.8],
            "n_prompts": [2_000_000] * 4,  # the reference's 2e6 prompts
        },
        "HE-T4.2iii": {
            "cases": [[0.05, 0.1], [0.125, 0.1], [0.125, 1.0], [0.25, 0.5], [0.5, 3.0]],
            "d_values": [20, 40, 80], "n_prompts": 40_000,
        },
        "HE-S1": {
            "d": 5, "L": 40, "sigma2": 0.1, "heads": [2, 3, 4, 5, 6, 8], "n_seeds": 50,
            "scale": 0.01, "t_end": 1e5, "n_times": 300, "tolerance": 0.01,
            "loss_gap_tolerance": 1e-3, "stage_one_min_heads": 4, "design_seed": 8,
        },
        "HE-S2": {
            "d": 5, "L": 40, "sigma2": 0.1, "heads": [2, 3, 4, 5, 6, 8], "n_seeds": 50,
            "scale": 0.01, "t_end": 1e5, "n_times": 300, "tolerance": 0.01,
            "loss_gap_tolerance": 1e-3, "stage_one_min_heads": 4, "design_seed": 8,
        },
        "HE-B-INIT": {
            "d": 5, "L": 40, "sigma2": 0.1, "eps": 1e-3, "rtol": 1e-10,
            "init_t_end": 50.0, "n_asymmetric": 50, "asymmetry": 0.1, "asym_t_end": 1e4,
            "design_seed": 22,
        },
        "HE-B-PHASE1": {
            "d": 5, "L": 40, "sigma2": 0.1, "eps": 1e-3, "rtol": 1e-10, "t_end": 1e8,
            "train_eps": 0.02, "sgd_lr": 0.005, "sgd_steps": 8000, "adam_lr": 1e-3,
            "adam_steps": 20000, "members": 16, "batch": 1024, "train_records": 200,
            "compare_t": [2.0, 4.0, 6.0, 8.0, 12.0, 20.0, 40.0],
        },
        "HE-B-PHASE2": {
            "d": 5, "L": 40, "sigma2": 0.1, "eps": 1e-3, "rtol": 1e-10, "t_end": 1e8,
            "high_d": [[20, 160], [100, 800], [400, 3200], [1600, 12800]],
        },
        "HE-B-PHASE3": {"d": 5, "L": 40, "sigma2": 0.1, "eps": 1e-3, "rtol": 1e-10, "t_end": 1e8},
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
