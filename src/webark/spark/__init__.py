"""Batch indexing and analysis of many WARCs on Apache Spark (``webark spark``).

The jobs map webark's pure functions over WARC files (or byte ranges of big ones) on
Spark executors, the shape of Common Crawl's cc-pyspark jobs: a list of inputs
``parallelize``-d into one partition per task, ``mapPartitions`` reading each WARC, then
a sort or a reduce, then the output. The same code runs in ``local[N]`` mode on one
machine and on any Spark master (``--master``, or ``spark-submit``). PySpark is an
optional extra (``pip install webark[spark]``) and needs Java 17+.

Jobs: :mod:`~webark.spark.cdx_job` (sorted CDXJ and ZipNum shards),
:mod:`~webark.spark.captures_job` (a Parquet capture table with Common Crawl's column
names), :mod:`~webark.spark.dedup_job` (a dedup index, as ``webark dedup build``),
:mod:`~webark.spark.stats_job` (the figures of ``webark stats``).
"""
