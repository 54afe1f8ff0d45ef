"""The project's independent LAMB reference (not a test itself): float64 numpy, written from the published algorithm
(You et al. 2019, "Large Batch Optimization for Deep Learning", Algorithm 2, with bias correction) plus NVIDIA's
choices for BERT (apex FusedLAMB, use_nvlamb=False): the gradients are first divided by max(1, global norm /
max_grad_norm); the update is m_hat / (sqrt(v_hat) + eps) + wd * w; weight decay and the trust ratio
||w|| / ||update|| only for weights that are neither biases nor LayerNorm parameters (all parameters with
trust_ratio_all); ratio 1 where a norm is 0. Used by test_lamb.py (the optimizer alone) and
test_train_trajectory.py (bert-train's whole step)."""
import numpy as np


def takes_decay(name):
    # Written from the rule as NVIDIA's and Google's scripts state it for HF names, not from our code.
    return not (name == "bias" or name.endswith(".bias") or "LayerNorm" in name)


class Lamb:
    def __init__(self, weights, cfg):
        """weights: name -> array (kept as float64 copies); cfg: beta1 beta2 eps weight_decay max_grad_norm
        trust_ratio_all."""
        self.cfg = cfg
        self.w = {n: np.asarray(x, np.float64).copy() for n, x in weights.items()}
        self.m = {n: np.zeros_like(x) for n, x in self.w.items()}
        self.v = {n: np.zeros_like(x) for n, x in self.w.items()}
        self.t = 0

    def step(self, grads, lr):
        """One update from grads (name -> array); returns the global gradient norm before pre-normalisation."""
        c = self.cfg
        b1, b2, eps, max_norm = c["beta1"], c["beta2"], c["eps"], c["max_grad_norm"]
        self.t += 1
        g = {n: np.asarray(grads[n], np.float64) for n in self.w}
        norm = float(np.sqrt(sum(np.sum(x * x) for x in g.values())))
        divisor = norm / max_norm if max_norm > 0 and norm > max_norm else 1.0
        for n in self.w:
            gn = g[n] / divisor
            self.m[n] = b1 * self.m[n] + (1 - b1) * gn
            self.v[n] = b2 * self.v[n] + (1 - b2) * gn * gn
            m_hat = self.m[n] / (1 - b1 ** self.t)
            v_hat = self.v[n] / (1 - b2 ** self.t)
            decay = c["weight_decay"] if takes_decay(n) else 0.0
            update = m_hat / (np.sqrt(v_hat) + eps) + decay * self.w[n]
            ratio = 1.0
            if decay != 0 or c["trust_ratio_all"]:
                w_norm, u_norm = np.linalg.norm(self.w[n]), np.linalg.norm(update)
                if w_norm > 0 and u_norm > 0:
                    ratio = w_norm / u_norm
            self.w[n] = self.w[n] - lr * ratio * update
        return norm
