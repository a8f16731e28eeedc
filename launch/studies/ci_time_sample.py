#!/usr/bin/env python3
"""Compile a sample of TUs under flag variants; print user+sys CPU seconds per (TU, variant).
usage: sample.py OUT.tsv VARIANT... ; TUs from $TUS (space separated suffixes)."""
import json, os, subprocess, sys, shlex, itertools
from concurrent.futures import ThreadPoolExecutor
M = '/work/ci-time-meas'
dirs = {'test': 'test-base', 'san': 'san-base', 'rel': 'rel-base'}
cc = {k: {e['file']: e for e in json.load(open(f'{M}/{d}/compile_commands.json'))} for k, d in dirs.items()}
def variant(name):
    kind, _, mod = name.partition(':')
    return kind, mod
def cmd(tu, name, n):
    kind, mod = variant(name)
    e = [v for f, v in cc[kind].items() if f.endswith(tu)][0]
    args = shlex.split(e['command'])
    args = [a for a in args if not a.startswith('-DCOMMSCALE_SOURCE_DIR')] + ['-DCOMMSCALE_SOURCE_DIR="/x"']
    i = args.index('-o'); args[i + 1] = f'/tmp/cit/o/{n}.o'
    for m in filter(None, mod.split(',')):
        old, _, new = m.partition('=')
        if old.startswith('+'):
            args.insert(1, old[1:]); continue
        args = [new if a == old else a for a in args]
        args = [a for a in args if a != '']
    return args, e['directory']
def run(job):
    n, (tu, name) = job
    args, d = cmd(tu, name, n)
    r = subprocess.run(['nice', '-n', '10', '/usr/bin/time', '-f', '%U %S'] + args, cwd=d, capture_output=True, text=True)
    if r.returncode: print('FAIL', tu, name, r.stderr[-2000:], file=sys.stderr); return tu, name, -1
    u, s = map(float, r.stderr.strip().splitlines()[-1].split())
    return tu, name, u + s
jobs = list(enumerate(itertools.product(os.environ['TUS'].split(), sys.argv[2:])))
with ThreadPoolExecutor(2) as ex, open(sys.argv[1], 'a') as out:
    for tu, name, t in ex.map(run, jobs):
        print(f'{tu}\t{name}\t{t:.2f}', flush=True); out.write(f'{tu}\t{name}\t{t:.2f}\n'); out.flush()
