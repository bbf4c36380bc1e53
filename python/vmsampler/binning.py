# SPDX-License-Identifier: MIT
"""Bounded aggregation of a run while it is read: at most `cap` bins per
series whatever the number of rows.

Rows go into bins of k consecutive rows (k = 1 at first); when the cap is
reached, neighbouring bins are merged in pairs and k doubles, so a run of
any length ends with between cap/2 and cap bins of equal row counts (the
last one may be partial), each the mean of its rows' values (a missing
value is left out of its bin's mean; a bin where a series has none is
NaN).  With no more rows than `cap`, each bin is one row: the values are
the rows' own.
"""

import numpy as np


class Binned:
    def __init__(self, ncols, cap=2000):
        if cap < 2 or cap % 2:
            raise ValueError('cap must be an even number >= 2')
        self.m, self.cap, self.k = ncols, cap, 1
        self.nb = 0
        self.t0 = None
        self.sums = np.zeros((cap, ncols))
        self.cnts = np.zeros((cap, ncols), dtype=np.int64)
        self.tsum = np.zeros(cap, dtype=np.int64)   # µs since t0, summed over the bin's rows
        self.rows = np.zeros(cap, dtype=np.int64)
        self.tfirst = np.zeros(cap, dtype=np.int64)  # start of the first row's interval (µs)
        self.tlast = np.zeros(cap, dtype=np.int64)   # time of the last row (µs)
        self._reset_partial()
        self.nrows = 0

    def _reset_partial(self):
        self.psum = np.zeros(self.m)
        self.pcnt = np.zeros(self.m, dtype=np.int64)
        self.pn = self.ptsum = self.pfirst = self.plast = 0

    def add(self, t_us, start_us, values):
        """t_us: the rows' times (µs), start_us: when each row's interval
        began (µs), values: an (n, ncols) float array, NaN for missing."""
        T = np.asarray(t_us, dtype=np.int64)
        S = np.asarray(start_us, dtype=np.int64)
        V = np.asarray(values, dtype=np.float64).reshape(len(T), self.m)
        n, i = len(T), 0
        if n == 0:
            return
        if self.t0 is None:
            self.t0 = int(T[0])
        self.nrows += n
        while i < n:
            k = self.k
            if self.pn == 0:
                g = min((n - i) // k, self.cap - self.nb)
                if g > 0:
                    j, nb = i + g * k, self.nb
                    blk = V[i:j].reshape(g, k, self.m)
                    valid = ~np.isnan(blk)
                    self.sums[nb:nb + g] = np.where(valid, blk, 0.0).sum(axis=1)
                    self.cnts[nb:nb + g] = valid.sum(axis=1)
                    self.tsum[nb:nb + g] = (T[i:j] - self.t0).reshape(g, k).sum(axis=1)
                    self.rows[nb:nb + g] = k
                    self.tfirst[nb:nb + g] = S[i:j:k]
                    self.tlast[nb:nb + g] = T[i + k - 1:j:k]
                    self.nb += g
                    i = j
                    if self.nb == self.cap:
                        self._merge()
                    continue
            take = min(k - self.pn, n - i)
            blk = V[i:i + take]
            valid = ~np.isnan(blk)
            self.psum += np.where(valid, blk, 0.0).sum(axis=0)
            self.pcnt += valid.sum(axis=0)
            self.ptsum += int((T[i:i + take] - self.t0).sum())
            if self.pn == 0:
                self.pfirst = int(S[i])
            self.plast = int(T[i + take - 1])
            self.pn += take
            i += take
            if self.pn == self.k:
                self._push_partial()
                if self.nb == self.cap:
                    self._merge()

    def _push_partial(self):
        nb = self.nb
        self.sums[nb], self.cnts[nb] = self.psum, self.pcnt
        self.tsum[nb], self.rows[nb] = self.ptsum, self.pn
        self.tfirst[nb], self.tlast[nb] = self.pfirst, self.plast
        self.nb += 1
        self._reset_partial()

    def _merge(self):
        h = self.cap // 2
        for a in (self.sums, self.cnts, self.tsum, self.rows):
            a[:h] = a[0::2] + a[1::2]
        self.tfirst[:h] = self.tfirst[0::2]
        self.tlast[:h] = self.tlast[1::2]
        for a in (self.sums, self.cnts):
            a[h:] = 0
        self.nb = h
        self.k *= 2

    def result(self):
        """(t_us, edges_us, means, rows): each bin's mean time (µs since
        the epoch, float; a row's own time when the bin is one row), the
        bins' edges (len + 1: the start of the first interval, then each
        bin's last time), the means (nbins, ncols) and the rows per bin."""
        nb = self.nb
        sums, cnts = self.sums[:nb], self.cnts[:nb]
        tsum, rows = self.tsum[:nb], self.rows[:nb]
        tfirst, tlast = self.tfirst[:nb], self.tlast[:nb]
        if self.pn:
            sums = np.vstack([sums, self.psum])
            cnts = np.vstack([cnts, self.pcnt])
            tsum = np.append(tsum, self.ptsum)
            rows = np.append(rows, self.pn)
            tfirst = np.append(tfirst, self.pfirst)
            tlast = np.append(tlast, self.plast)
        if len(rows) == 0:
            return (np.zeros(0), np.zeros(0), np.zeros((0, self.m)), rows)
        with np.errstate(invalid='ignore', divide='ignore'):
            means = np.where(cnts > 0, sums / np.maximum(cnts, 1), np.nan)
        # exact integers where a bin is one row
        t = np.where(rows == 1, self.t0 + tsum, self.t0 + tsum / rows)
        edges = np.concatenate([[tfirst[0]], tlast]).astype(np.float64)
        return t, edges, means, rows

    def totals(self):
        """Per column: the number of values and their sum over every row."""
        cnt = self.cnts[:self.nb].sum(axis=0) + self.pcnt
        tot = self.sums[:self.nb].sum(axis=0) + self.psum
        return cnt, tot
