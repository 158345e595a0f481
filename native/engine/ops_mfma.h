/* Matrix FMA (mfma.py): case bodies of the interpreter switch (added with the MFMA handlers). */
