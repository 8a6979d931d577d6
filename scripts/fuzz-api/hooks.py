"""Schemathesis hooks of `make fuzz-api`: the master upload's body is raw bytes."""
import schemathesis

# POST /api/licenses/masters takes the file as application/vnd.iki.model: send what the
# fuzzer generates as raw bytes, as it does for application/octet-stream.
schemathesis.serializer.alias("application/vnd.iki.model", "application/octet-stream")
