#!/bin/bash
set -euo pipefail
for f in "$@"; do
  echo "$f"
done
