from ckptdiag.cli import main

main()
