import subprocess, json, sys, os, hashlib
OLD, NEW = sys.argv[1], sys.argv[2]
D = '/tmp/eq'
TIMING = ('second', 'per_s', 'speed', 'elapsed', 'moves_per', 'rollouts_per', 'boards_per', 'threads', 'wall', 'time', 'rate', 'available')
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if not any(t in k for t in TIMING)}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
def run(binary, args):
    r = subprocess.run([binary] + args, capture_output=True, text=True, env=dict(os.environ, XDG_CACHE_HOME=D + '/cache'))
    return r.returncode, r.stdout
cases = [
    (['2048', 'play', '--games', '20', '--seed', '5', '--json'], None),
    (['2048', 'play', '--player', 'mc', '--rollouts', '5', '--games', '3', '--seed', '1', '--backend', 'cpu', '--json'], None),
    (['2048', 'eval', '0x1000000000000011', '--rollouts', '20', '--seed', '3', '--backend', 'cpu', '--json'], None),
    (['2048', 'show', '0x1000000000000011', '--json'], None),
    (['2048', 'train', '--tuples', 'small', '--games', '300', '--seed', '1', '--out', 'OUT', '--json', '--force', '--threads', '1'], 'net.bin'),
    (['2048', 'experiment', '--games', '4', '--rollouts', '1,2', '--seed', '1', '--backend', 'cpu', '--out', 'OUT', '-q'], 'exp.jsonl'),
    (['bearoff', 'build', '--points', '6', '--checkers', '8', '--out', 'OUT', '--json'], 'os.rsb'),
    (['bearoff', 'build', '--points', '6', '--checkers', '8', '--format', 'gnubg', '--out', 'OUT', '--json'], 'os.bd'),
    (['bearoff', 'build', '--two-sided', '--cubeful', '--points', '4', '--checkers', '5', '--out', 'OUT', '--json', '--backend', 'cpu'], 'ts.rsb'),
    (['bearoff', 'build', '--two-sided', '--cubeful', '--points', '4', '--checkers', '5', '--format', 'gnubg', '--out', 'OUT', '--json', '--backend', 'cpu'], 'ts.bd'),
    (['puzzle', 'bench', '--count', '50', '--seed', '1', '--json'], None),
    (['puzzle', 'solve', '--board', '0x123456789abcdef0', '--method', 'loop', '--json'], None),
    (['puzzle', 'bench', '--count', '5', '--seed', '2', '--method', 'optimal', '--pdb', '5-5-5', '--json'], None),
    (['2048', 'play', '--games', '99999999999'], None),
    (['bearoff', 'query', '/nonexistent', '1'], None),
]
bad = 0
for args, out in cases:
    res = []
    for b, tag in ((OLD, 'old'), (NEW, 'new')):
        a = [x.replace('OUT', f'{D}/{tag}-{out}') for x in args]
        rc, stdout = run(b, a)
        stdout = stdout.replace(f'{D}/{tag}-', 'OUT-')
        try:
            s = json.dumps(strip(json.loads(stdout)), sort_keys=True) if stdout.strip().startswith(('{', '[')) else stdout
        except Exception:
            s = stdout
        h = hashlib.sha256(open(f'{D}/{tag}-{out}', 'rb').read()).hexdigest() if out else None
        res.append((rc, s, h))
    same = res[0] == res[1]
    bad += not same
    print('same' if same else 'DIFFERENT', ' '.join(args[:4]), 'rc', res[0][0], res[1][0], ('file ' + ('same' if res[0][2] == res[1][2] else 'DIFFERS')) if out else '')
    if not same:
        print('  old:', str(res[0][1])[:300]); print('  new:', str(res[1][1])[:300])
sys.exit(1 if bad else 0)
