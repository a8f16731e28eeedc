"""Reading committed results whether or not results/ keeps them gzip-compressed (issue 37).

results/ stores bulky raw files as FILE.gz (`gzip -9 -n`); the study scripts here name them as they
were written. open_data(PATH) opens PATH, or PATH.gz where only that is there (a PATH that ends in .gz
is read as gzip); plain_path(PATH, FOLDER) gives a path that a program which does not read gzip
(commscale, launch/*.py) can take: PATH itself, or its content written uncompressed into FOLDER.
"""

import gzip
import os


def data_path(path):
    """PATH where it is there, else PATH.gz where that is, else PATH (for the error)."""
    if not os.path.exists(path) and not path.endswith(".gz") and os.path.exists(path + ".gz"):
        return path + ".gz"
    return path


def open_data(path):
    """PATH (or PATH.gz) opened for reading text."""
    path = data_path(path)
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def plain_path(path, folder):
    """PATH uncompressed: itself, or a copy in FOLDER (by its name without .gz) where results/ has PATH.gz."""
    path = data_path(path)
    if not path.endswith(".gz"):
        return path
    out = os.path.join(folder, os.path.basename(path)[:-3])
    with gzip.open(path, "rb") as src, open(out, "wb") as dst:
        dst.write(src.read())
    return out
