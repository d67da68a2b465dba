"""A cluster: Spark runs `pi-usage --calls` on the session files (mapPartitions over their
paths, in batches of 64 per call of the binary), reduces the usage_call records with Spark SQL,
dedups on the identity, and must get the totals of `pi-usage --total` over the same files.
Run by scripts/scale-check; docs/SCALE.md is the recipe.

usage: spark_check.py --master URL PI_USAGE PATHS0_FILE

On a real cluster the session files must be readable at the same paths on every executor (a
shared file system); the binary is shipped to the executors with the job (SparkFiles).
"""

import argparse
import os
import subprocess
import sys
import time

from pyspark import SparkFiles
from pyspark.sql import SparkSession

from common import COLUMNS, RANKED_SQL, SUMS, SUMS_SQL, compare, engine_sums, pi_usage_records

BATCH = 64


def spark_type(duckdb_type):
    return {"VARCHAR": "STRING", "HUGEINT": "DECIMAL(38,0)"}.get(duckdb_type, duckdb_type)


SCHEMA = ", ".join(f"`{k}` {spark_type(t)}" for k, t in COLUMNS.items())


def run_binary(paths):
    """The usage_call lines of `paths` (an executor's partition), pi-usage run on each batch."""
    exe = SparkFiles.get("pi-usage")
    if not os.access(exe, os.X_OK):
        os.chmod(exe, 0o755)
    paths = list(paths)
    for i in range(0, len(paths), BATCH):
        p = subprocess.run(
            [exe, "--calls", "--tz", "UTC", "--", *paths[i : i + BATCH]],
            capture_output=True,
        )
        # 2: diagnostics about the input (reported by pi-usage --total below too).
        if p.returncode not in (0, 2):
            raise RuntimeError(f"pi-usage --calls failed ({p.returncode}): {p.stderr[-2000:]}")
        yield from p.stdout.decode().splitlines()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("pi_usage")
    ap.add_argument("paths0")
    a = ap.parse_args()
    with open(a.paths0, "rb") as f:
        files = [p.decode() for p in f.read().split(b"\0") if p]
    spark = (
        SparkSession.builder.master(a.master)
        .appName("pi-usage-scale-check")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    started = time.monotonic()
    sc = spark.sparkContext
    sc.addFile(os.path.abspath(a.pi_usage))
    partitions = max(1, sc.defaultParallelism)
    # The records are few (one per call): a few reduce tasks per core, not Spark's 200.
    spark.conf.set("spark.sql.shuffle.partitions", str(2 * partitions))
    lines = sc.parallelize(files, partitions).mapPartitions(run_binary)
    spark.createDataFrame(lines.map(lambda l: (l,)), "json STRING").selectExpr(
        f"from_json(json, '{SCHEMA}') AS c"
    ).select("c.*").createOrReplaceTempView("records")
    spark.createDataFrame(list(enumerate(files)), "rank INT, file STRING").createOrReplaceTempView(
        "files"
    )
    spark.sql("SELECT r.*, f.rank FROM records r JOIN files f USING (file)").cache()\
        .createOrReplaceTempView("calls")
    row = spark.sql(f"SELECT {SUMS_SQL} FROM ({RANKED_SQL})").collect()[0].asDict()
    records = spark.sql("SELECT count(*) FROM calls").collect()[0][0]
    engine_seconds = time.monotonic() - started
    spark.stop()
    got = {(): engine_sums(row)}
    total = pi_usage_records(a.pi_usage, ["--total"], files)[0]
    want = {(): dict({s: total["total"][s] for s in SUMS}, duplicates=total["duplicates"])}
    bad = compare(f"spark {a.master} --total", got, want)
    print(f"spark {a.master}: {records} usage_call records from {len(files)} files "
          f"in {engine_seconds:.2f} s (binary runs, SQL reduce)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
