"""What the differential runs share (pi16/compare-adversarial.py against Pi 1.6.0,
omp/compare.py against oh-my-pi): running a tool, and tallying each file's disagreement by
the change or departure it belongs to."""
import collections, json, os, subprocess, sys


def runner(bins):
    """A function that runs a tool of `bins` with arguments and returns its CompletedProcess."""
    return lambda tool, *args: subprocess.run([os.path.join(bins, tool), *args], capture_output=True)


def tally(ref, disagreement, change_of, departures, against):
    """Reads the reference answers `ref` (one JSON object a line) and asks
    `disagreement(answer)` why the tools disagree with each (None: they agree); a
    disagreement whose `change_of(answer)` is a key of `departures` is documented, any other
    is printed as unexpected. Prints the counts and exits 1 when anything was unexpected."""
    expected, unexpected, checked = collections.Counter(), [], 0
    for line in open(ref):
        r = json.loads(line)
        checked += 1
        why = disagreement(r)
        if why is None:
            continue
        change = change_of(r)
        if change in departures:
            expected[change] += 1
        else:
            unexpected.append((r["file"], why))
    agree = checked - sum(expected.values()) - len(unexpected)
    print(f"{checked} files: {agree} agree with {against}, "
          f"{sum(expected.values())} depart as documented, {len(unexpected)} unexpectedly")
    for change, n in sorted(expected.items()):
        print(f"  documented  {change} ({n}): {departures[change]}")
    for f, why in unexpected:
        print(f"  UNEXPECTED  {f}: {why}")
    sys.exit(1 if unexpected else 0)
