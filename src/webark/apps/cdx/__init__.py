"""The resolution API ("CDX server"): HTTP parameters, output formats, streaming."""
