"""Runs one SQL query with Apache DataFusion over the Parquet files of a directory (each
file a table named by its stem) and prints the rows as a JSON array of objects.

usage: query_datafusion.py DIR SQL
"""
import json
import pathlib
import sys

from datafusion import SessionContext


def main():
    directory, sql = pathlib.Path(sys.argv[1]), sys.argv[2]
    ctx = SessionContext()
    for f in sorted(directory.glob("*.parquet")):
        ctx.register_parquet(f.stem, str(f))
    rows = ctx.sql(sql).to_arrow_table().to_pylist()
    json.dump(rows, sys.stdout, default=str)


if __name__ == "__main__":
    main()
