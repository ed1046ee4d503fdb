"""python -m mkdocs_syndicate.cli"""

from mkdocs_syndicate.cli import main

main()
