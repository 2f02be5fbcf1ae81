# args.sh -- sourced by the bench scripts: refuses an argument that is not a
# whole number >= 1 with a message that names it and the script's usage line
# (the script's comment line that starts with "#   bench/"), instead of
# failing later inside a run whose output went to a file.
#   positive NAME VALUE
positive() {
  case "$2" in
    '' | *[!0-9]* | 0 | 0*)
      echo "$(basename "$0"): $1 must be a whole number >= 1, not '$2'" >&2
      sed -n 's/^#   \(bench\/.*\)/usage: \1/p' "$0" >&2
      exit 2 ;;
  esac
}
