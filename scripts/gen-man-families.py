#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Regenerate vmsampler(1) EXPORT's list of metric families from
src/tools/metrics_fams.h (the one definition), the legacy names from
metrics.c's legacy_names[] and the exclusions from vms_mexcl[]:
    scripts/gen-man-families.py          rewrite man/vmsampler.1
    scripts/gen-man-families.py --check  exit 1 if it is not up to date"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cstrings(s):
    """the C string literals of s, adjacent ones joined"""
    out, cur, i, prev_str = [], None, 0, False
    toks = re.findall(r'"(?:[^"\\]|\\.)*"|[^",\s]+|,', s)
    for t in toks:
        if t.startswith('"'):
            v = bytes(t[1:-1], 'utf-8').decode('unicode_escape')
            if prev_str:
                out[-1] += v
            else:
                out.append(v)
            prev_str = True
        else:
            if t != ',':
                out.append(t)
            prev_str = False
    return out


def calls(text, name):
    """the argument texts of every call name(...) at the start of a line"""
    res = []
    for m in re.finditer(r'^%s\(' % name, text, re.M):
        i, depth, instr = m.end(), 1, False
        j = i
        while depth:
            c = text[j]
            if instr:
                if c == '\\':
                    j += 1
                elif c == '"':
                    instr = False
            elif c == '"':
                instr = True
            elif c == '(':
                depth += 1
            elif c == ')':
                depth -= 1
            j += 1
        res.append(text[i:j - 1])
    return res


def families():
    text = open(os.path.join(ROOT, 'src/tools/metrics_fams.h')).read()
    text = re.sub(r'#define MEM[BN]\(k\).*?\n(?=[^\t ])', '', text, flags=re.S)
    fams = []
    for line in text.splitlines():
        m = re.match(r'^MEM([BN])\((\w+)\)$', line)
        if m:
            k = m.group(2)
            if m.group(1) == 'B':
                fams.append((k, 'node_memory_%s_bytes' % k, 'GAUGE', 'bytes', '',
                             'Memory information field %s_bytes.' % k, 'mem.' + k))
            else:
                fams.append((k, 'node_memory_' + k, 'GAUGE', '', '', 'Memory information field %s.' % k, 'mem.' + k))
        elif line.startswith('F('):
            fams.append(None)  # placeholder, filled in order below
    args = iter(calls(text, 'F'))
    fams = [f if f else tuple(cstrings(next(args))) for f in fams]
    return fams


def esc(s):
    return s.replace('\\', '\\e').replace('-', '\\-')


def legacy():
    text = open(os.path.join(ROOT, 'src/tools/metrics.c')).read()
    if 'legacy_names[] = {' not in text:
        return []
    body = text[text.index('legacy_names[] = {'):]
    body = body[:body.index('};')]
    return re.findall(r'\{FAM_(\w+), "(\w+)"\}', body)


def exclusions():
    text = open(os.path.join(ROOT, 'src/tools/metrics.c')).read()
    if 'vms_mexcl[] = {' not in text:
        return []
    body = text[text.index('const struct vms_mexcl vms_mexcl[] = {'):]
    body = body[:body.index('};')]
    out = []
    for m in re.finditer(r'\{VMS_G_(\w+), "([^"]*)",((?:\s*"(?:[^"\\]|\\.)*")+)\}', body):
        out.append((m.group(1).lower(), m.group(2), ''.join(cstrings(m.group(3)))))
    return out


def render():
    fams = families()
    ids = {f[0]: f for f in fams}
    out = []
    for (fid, name, typ, unit, labels, help_, src) in fams:
        counter = typ == 'COUNTER'
        full = name + ('_total' if counter else '')
        if typ == 'UNTYPED':
            full = name + '_KEY'
        t = {'COUNTER': 'counter', 'GAUGE': 'gauge', 'UNTYPED': 'untyped'}[typ]
        if unit:
            t += ', ' + unit
        lab = ', '.join(labels.split(',')) if labels else 'none'
        frm = src
        if src == 'remote write':
            frm = 'remote write (only with \\-\\-remote\\-write and \\-\\-listen)'
        else:
            frm = esc(src)
        out.append('.TP\n.B %s\n%s; labels: %s; from %s.\n%s' % (esc(full), t, lab, frm, help_.replace('\\', '\\e')))
    if not legacy():
        return '\n'.join(out) + '\n'
    out.append('.PP\n.B Legacy names.\nWith\n.BR "\\-\\-names legacy" ,\n'
               'these families keep the names of vmsampler 1.x (node_exporter 1.5 and\n'
               'kumina\'s libvirt exporter); every other name is the same in both sets.\n'
               'libvirt_domain_info_state has one series per state (the current one\'s,\n'
               'with state_desc); libvirt_domain_state_code has one, the code.')
    for fid, old in legacy():
        f = ids[fid]
        sfx = '_total' if f[2] == 'COUNTER' else ''
        out.append('.TP\n.B %s\nlegacy name of\n.BR %s .' % (esc(old + sfx), esc(f[1] + sfx)))
    out.append('.PP\n.B Columns without a family.\n'
               'Every column maps to a family but these (\n.B vmsampler export \\-\\-list\\-columns\n'
               'says what each column of a file becomes):')
    for g, field, why in exclusions():
        what = 'any %s column' % g if field == '*' else '%s.%s' % (g, field)
        if g == 'none':
            what = 'a column outside the catalogue'
        elif g == 'mem':
            what = 'mem.KEY for a key not listed above'
        out.append('.TP\n%s\n%s.' % (esc(what), esc(why[0].upper() + why[1:])))
    return '\n'.join(out) + '\n'


def main():
    path = os.path.join(ROOT, 'man/vmsampler.1')
    page = open(path).read()
    start = page.index('.TP\n.B node_cpu_seconds_total\n')
    end = page.index('.SH OUTPUT\n', start)
    new = page[:start] + render() + page[end:]
    if '--check' in sys.argv[1:]:
        if new != page:
            sys.stderr.write('man/vmsampler.1 EXPORT families are not up to date: run scripts/gen-man-families.py\n')
            return 1
        return 0
    if new != page:
        open(path, 'w').write(new)
    return 0


if __name__ == '__main__':
    sys.exit(main())
