"""The peer benchmark models and the Udwadia-Kalaba acceleration, written once for array libraries.

Every Python peer (SciPy, NumPy, JAX, PyTorch) computes with its own library; the mathematics is
written here once against a small `Ops` adapter, so the peers cannot disagree with each other by a
typo. It is independent of our C++ kernels: written from docs/MODELS.md, constraint rows already
in second-order form A qdd = b (derived by hand, not by automatic differentiation).

Arrays carry any leading batch shape: q has shape (..., n); M (..., n, n); A (..., m, n). The
SciPy peer passes one system (shape (n,)), the NumPy and PyTorch peers a whole batch (N, n), JAX a
single system under vmap. Default parameters only.
"""

import math


class Ops:
    """The few array operations the models need, for numpy, jax.numpy or torch."""

    def __init__(self, kind, module, dtype=None, device=None):
        self.kind = kind  # "numpy", "jax" or "torch"
        self.xp = module
        self.dtype = dtype
        self.device = device

    def stack(self, xs, axis):
        if self.kind == "torch":
            return self.xp.stack(xs, dim=axis)
        return self.xp.stack(xs, axis=axis)

    def concat(self, xs, axis):
        if self.kind == "torch":
            return self.xp.cat(xs, dim=axis)
        return self.xp.concatenate(xs, axis=axis)

    def vector(self, entries, zero):
        """A (..., k) array from k entries, each a scalar or an array of the batch shape."""
        return self.stack([zero + e for e in entries], -1)

    def matrix(self, rows, zero):
        return self.stack([self.vector(r, zero) for r in rows], -2)

    def sin(self, x):
        return self.xp.sin(x)

    def cos(self, x):
        return self.xp.cos(x)

    def exp(self, x):
        return self.xp.exp(x)

    def sqrt(self, x):
        return self.xp.sqrt(x)

    def mT(self, x):
        """Transpose of the last two axes."""
        if self.kind == "torch":
            return x.transpose(-1, -2)
        return self.xp.swapaxes(x, -1, -2)

    def linalg(self):
        return self.xp.linalg


def numpy_ops():
    import numpy

    return Ops("numpy", numpy)


class Scara:
    """SCARA robot following a helix (docs/MODELS.md 6); four position rows, Baumgarte 30 / 225."""

    name, n, position_rows, velocity_rows = "scara", 4, 4, 0
    alpha, beta = 30.0, 225.0
    m1, m2, m3, m4 = 20.0, 15.0, 15.0, 0.5
    l0, l1, l2, r1, r2 = 0.0, 0.2, 0.25, 0.1, 0.125
    Iz1, Iz2, Iz3, Iz4 = 0.27, 0.31, 0.02, 0.0001
    g, xc, yc, R, Omega, vz, psi0 = 9.81, 0.0, 0.35, 0.05, 0.4 * math.pi, 0.02, 0.0
    Al = Iz1 + r1 * r1 * m1 + l1 * l1 * (m2 + m3 + m4)
    Be = Iz2 + Iz3 + Iz4 + l2 * l2 * (m3 + m4) + m2 * r2 * r2
    Ga = l1 * l2 * (m3 + m4) + l1 * m2 * r2
    De = Iz3 + Iz4

    def mass(self, ops, q, t, z):
        c2 = ops.cos(q[..., 1])
        Al, Be, Ga, De = self.Al, self.Be, self.Ga, self.De
        return ops.matrix(
            [
                [Al + Be + 2 * Ga * c2, Be + Ga * c2, De, 0.0],
                [Be + Ga * c2, Be, De, 0.0],
                [De, De, De, 0.0],
                [0.0, 0.0, 0.0, self.m4],
            ],
            z,
        )

    def force(self, ops, q, qd, t, z):
        s2 = ops.sin(q[..., 1])
        w1, w2 = qd[..., 0], qd[..., 1]
        return ops.vector(
            [self.Ga * s2 * w2 * (2 * w1 + w2), -self.Ga * s2 * w1 * w1, 0.0, -self.m4 * self.g],
            z,
        )

    def rows(self, ops, q, qd, t, z):
        l1, l2, R, W = self.l1, self.l2, self.R, self.Omega
        s1, c1 = ops.sin(q[..., 0]), ops.cos(q[..., 0])
        s12, c12 = ops.sin(q[..., 0] + q[..., 1]), ops.cos(q[..., 0] + q[..., 1])
        sw, cw = ops.sin(W * t), ops.cos(W * t)
        w1, w12 = qd[..., 0], qd[..., 0] + qd[..., 1]
        A = ops.matrix(
            [
                [-l1 * c1 - l2 * c12, -l2 * c12, 0.0, 0.0],
                [-l1 * s1 - l2 * s12, -l2 * s12, 0.0, 0.0],
                [1.0, 1.0, 1.0, 0.0],
                [0.0, 0.0, 0.0, 1.0],
            ],
            z,
        )
        b = ops.vector(
            [
                -(l1 * s1 * w1 * w1 + l2 * s12 * w12 * w12 + R * W * W * sw),
                l1 * c1 * w1 * w1 + l2 * c12 * w12 * w12 - R * W * W * cw,
                0.0,
                0.0,
            ],
            z,
        )
        value = ops.vector(
            [
                -l1 * s1 - l2 * s12 - self.xc - R * sw,
                l1 * c1 + l2 * c12 - self.yc - R * cw,
                q[..., 0] + q[..., 1] + q[..., 2] - self.psi0,
                q[..., 3] + self.l0 - self.vz * t,
            ],
            z,
        )
        # phid = A qd + d phi / dt.
        rate = (A @ qd[..., None])[..., 0] + ops.vector(
            [-R * W * cw, R * W * sw, 0.0, -self.vz], z
        )
        return A, b, value, rate


class FourBar:
    """Grounded four-bar linkage in absolute coordinates (docs/MODELS.md 9); eight position rows."""

    name, n, position_rows, velocity_rows = "four_bar", 9, 8, 0
    alpha, beta = 0.0, 0.0
    L1, L2, L3, d, m1, m2, m3, g, tau = 1.0, 3.0, 2.0, 2.5, 1.0, 3.0, 2.0, 9.81, 0.0

    def mass(self, ops, q, t, z):
        diag = [
            self.m1, self.m1, self.m1 * self.L1**2 / 12,
            self.m2, self.m2, self.m2 * self.L2**2 / 12,
            self.m3, self.m3, self.m3 * self.L3**2 / 12,
        ]  # fmt: skip
        return ops.matrix([[diag[i] if i == j else 0.0 for j in range(9)] for i in range(9)], z)

    def force(self, ops, q, qd, t, z):
        m1, m2, m3, g = self.m1, self.m2, self.m3, self.g
        return ops.vector([0.0, -m1 * g, self.tau, 0.0, -m2 * g, 0.0, 0.0, -m3 * g, 0.0], z)

    # Bar k has centre q[3k], q[3k+1], angle q[3k+2], ends centre -+ h (cos th, sin th). A row
    # holding +h cos th has -h sin th in A and +h cos th thd^2 in b; +h sin th has +h cos th in A
    # and +h sin th thd^2 in b.
    def rows(self, ops, q, qd, t, z):
        h = [0.5 * self.L1, 0.5 * self.L2, 0.5 * self.L3]
        c = [ops.cos(q[..., 3 * k + 2]) for k in range(3)]
        s = [ops.sin(q[..., 3 * k + 2]) for k in range(3)]
        w2 = [qd[..., 3 * k + 2] * qd[..., 3 * k + 2] for k in range(3)]
        A = [[0.0] * 9 for _ in range(8)]
        b, value = [], []
        # E_1^- = O1.
        A[0][0], A[0][2] = 1.0, h[0] * s[0]
        b.append(-h[0] * c[0] * w2[0])
        value.append(q[..., 0] - h[0] * c[0])
        A[1][1], A[1][2] = 1.0, -h[0] * c[0]
        b.append(-h[0] * s[0] * w2[0])
        value.append(q[..., 1] - h[0] * s[0])
        # E_k^+ = E_{k+1}^-.
        for k in range(2):
            rx, ry, a, nx = 2 + 2 * k, 3 + 2 * k, 3 * k, 3 * (k + 1)
            A[rx][a], A[rx][a + 2], A[rx][nx], A[rx][nx + 2] = (
                1.0, -h[k] * s[k], -1.0, -h[k + 1] * s[k + 1]
            )  # fmt: skip
            b.append(h[k] * c[k] * w2[k] + h[k + 1] * c[k + 1] * w2[k + 1])
            value.append(q[..., a] + h[k] * c[k] - (q[..., nx] - h[k + 1] * c[k + 1]))
            A[ry][a + 1], A[ry][a + 2], A[ry][nx + 1], A[ry][nx + 2] = (
                1.0, h[k] * c[k], -1.0, h[k + 1] * c[k + 1]
            )  # fmt: skip
            b.append(h[k] * s[k] * w2[k] + h[k + 1] * s[k + 1] * w2[k + 1])
            value.append(q[..., a + 1] + h[k] * s[k] - (q[..., nx + 1] - h[k + 1] * s[k + 1]))
        # E_3^+ = O4.
        A[6][6], A[6][8] = 1.0, -h[2] * s[2]
        b.append(h[2] * c[2] * w2[2])
        value.append(q[..., 6] + h[2] * c[2] - self.d)
        A[7][7], A[7][8] = 1.0, h[2] * c[2]
        b.append(h[2] * s[2] * w2[2])
        value.append(q[..., 7] + h[2] * s[2])
        A = ops.matrix(A, z)
        rate = (A @ qd[..., None])[..., 0]  # scleronomic
        return A, ops.vector(b, z), ops.vector(value, z), rate


class Swarm:
    """Five robots under an interaction (servo) constraint (docs/MODELS.md 2); ten velocity rows."""

    name, n, position_rows, velocity_rows = "swarm", 10, 0, 10
    alpha, beta = 5.0, 0.0
    robots, robot_mass, a = 5, 2.0, 0.5

    def mass(self, ops, q, t, z):
        n = self.n
        return ops.matrix([[self.robot_mass if i == j else 0.0 for j in range(n)] for i in range(n)], z)

    def force(self, ops, q, qd, t, z):
        return ops.vector([0.0] * self.n, z)

    # psi_i = qd_i + sum_j d (1 - a / r) with d = q_i - q_j, r = |d|; along the motion
    # d/dt [d (1 - a / r)] = dd (1 - a / r) + d a (d . dd) / r^3, so A = I and b = -that sum.
    def rows(self, ops, q, qd, t, z):
        psi, b = [], []
        for i in range(self.robots):
            px, py = qd[..., 2 * i], qd[..., 2 * i + 1]
            bx, by = 0.0, 0.0
            for j in range(self.robots):
                if j == i:
                    continue
                dx = q[..., 2 * i] - q[..., 2 * j]
                dy = q[..., 2 * i + 1] - q[..., 2 * j + 1]
                dxd = qd[..., 2 * i] - qd[..., 2 * j]
                dyd = qd[..., 2 * i + 1] - qd[..., 2 * j + 1]
                r = ops.sqrt(dx * dx + dy * dy)
                w = 1.0 - self.a / r
                radial = self.a * (dx * dxd + dy * dyd) / (r * r * r)
                px, py = px + dx * w, py + dy * w
                bx, by = bx - (dxd * w + dx * radial), by - (dyd * w + dy * radial)
            psi += [px, py]
            b += [bx, by]
        n = self.n
        A = ops.matrix([[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)], z)
        return A, ops.vector(b, z), ops.vector(psi, z), ops.vector([0.0] * n, z)


class Duffing:
    """Coupled Duffing oscillators, rheonomic row x1 - x2 = A0 e^{-alpha t} sin(omega t)."""

    name, n, position_rows, velocity_rows = "duffing", 2, 1, 0
    alpha, beta = 0.0, 0.0  # Baumgarte gains (the model's own alpha is `decay`)
    m1, m2, k1, k2, k1nl, k2nl, c1, c2 = 2.0, 1.0, 10.0, 12.0, 1.0, 2.0, 0.1, 0.15
    A0, omega, decay = 1.0, 2 * math.pi, 1.0

    def mass(self, ops, q, t, z):
        return ops.matrix([[self.m1, 0.0], [0.0, self.m2]], z)

    def force(self, ops, x, xd, t, z):
        d = x[..., 0] - x[..., 1]
        dd = xd[..., 0] - xd[..., 1]
        nl1 = self.k1nl * d * d * d
        x2, x2d = x[..., 1], xd[..., 1]
        return ops.vector(
            [
                -(self.k1 * d + self.c1 * dd + nl1),
                -(-self.k1 * d + self.k2 * x2 - self.c1 * dd + self.c2 * x2d
                  + self.k2nl * x2 * x2 * x2 - nl1),
            ],
            z,
        )  # fmt: skip

    def rows(self, ops, x, xd, t, z):
        a, w = self.decay, self.omega
        e, s, c = ops.exp(-a * t), ops.sin(w * t), ops.cos(w * t)
        f = e * s
        fd = e * (w * c - a * s)
        fdd = e * ((a * a - w * w) * s - 2 * a * w * c)
        A = ops.matrix([[1.0, -1.0]], z)
        b = ops.vector([self.A0 * fdd], z)
        value = ops.vector([x[..., 0] - x[..., 1] - self.A0 * f], z)
        rate = ops.vector([xd[..., 0] - xd[..., 1] - self.A0 * fd], z)
        return A, b, value, rate


MODELS = {m.name: m for m in (Scara(), FourBar(), Swarm(), Duffing())}


def stabilized_rhs(ops, model, b, value, rate):
    """b - alpha phid - beta phi on position rows, b - alpha psi on velocity rows."""
    p = model.position_rows
    pos = b[..., :p] - model.alpha * rate[..., :p] - model.beta * value[..., :p]
    vel = b[..., p:] - model.alpha * value[..., p:]
    if model.velocity_rows == 0:
        return pos
    if p == 0:
        return vel
    return ops.concat([pos, vel], -1)


def uk_acceleration(ops, model, q, qd, t):
    """qdd = a + L^-T (A L^-T)^+ (b - A a), a = M^-1 Q, M = L L^T (Cholesky for M^1/2)."""
    z = q[..., 0] * 0.0  # batch-shaped zero: scalars broadcast through it
    t = z + t
    la = ops.linalg()
    M = model.mass(ops, q, t, z)
    Q = model.force(ops, q, qd, t, z)
    A, b, value, rate = model.rows(ops, q, qd, t, z)
    b = stabilized_rhs(ops, model, b, value, rate)
    Linv_T = ops.mT(la.inv(la.cholesky(M)))  # L^-T
    a = (Linv_T @ (ops.mT(Linv_T) @ Q[..., None]))[..., 0]
    B = A @ Linv_T
    y = la.pinv(B) @ (b - (A @ a[..., None])[..., 0])[..., None]
    return a + (Linv_T @ y)[..., 0]


def first_order_rhs(ops, model):
    """x' = (qd, qdd) for x = (q, qd) of shape (..., 2n)."""
    n = model.n

    def f(t, x):
        q, qd = x[..., :n], x[..., n:]
        return ops.concat([qd, uk_acceleration(ops, model, q, qd, t)], -1)

    return f


def fixed_rk4(f, x, dt, steps, t0=0.0):
    """Classical RK4 at a fixed step (t_k = t0 + k dt), for any array library."""
    for k in range(steps):
        t = t0 + k * dt
        k1 = f(t, x)
        k2 = f(t + 0.5 * dt, x + (0.5 * dt) * k1)
        k3 = f(t + 0.5 * dt, x + (0.5 * dt) * k2)
        k4 = f(t + dt, x + dt * k3)
        x = x + (dt / 6.0) * (k1 + 2.0 * (k2 + k3) + k4)
    return x
