"""A training-style dataset of video clips read by several worker processes.

    python3 Samples/python/dataset.py [--workers N] [--clips K] [--frames F] [--size WxH] FILE...

`ClipDataset` is a map-style dataset (torch.utils.data's shape: `len()` and `ds[i]`): item i is
clip i % K of file i // K, F frames drawn by mediakit.samplers.clips_at_random_indices with a
seed fixed per item (so every worker, and every epoch, draws the same clip for the same i), as
float32 RGB in [0, 1], CHW, scaled to WxH. Each worker opens the files itself (a VideoDecoder is
not shared across processes) and decodes with one thread (mediakit.set_threads(1)), so N workers
use N cores. With PyTorch installed the items go through torch.utils.data.DataLoader (tensors
made from the arrays without a copy: torch.from_numpy); without it, through a multiprocessing
pool of the same size. Prints one line per clip: its item, file, pts and the MD5 of its pixels.
"""
from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import sys
from typing import Any, Optional

import mediakit
from mediakit import samplers


class ClipDataset:
    """Clips of F frames, K per file, decoded on demand in whichever process asks."""

    def __init__(self, paths: list[str], clips_per_file: int, frames_per_clip: int, width: int, height: int):
        self.paths, self.clips, self.frames = paths, clips_per_file, frames_per_clip
        self.width, self.height = width, height
        self._decoders: dict[str, mediakit.VideoDecoder] = {}     # this process's own, opened lazily

    def __len__(self) -> int:
        return len(self.paths) * self.clips

    def _decoder(self, path: str) -> mediakit.VideoDecoder:
        if path not in self._decoders:
            mediakit.set_threads(1)
            self._decoders[path] = mediakit.VideoDecoder(path, format="float32", dimension_order="NCHW",
                                                         width=self.width, height=self.height)
        return self._decoders[path]

    def __getitem__(self, i: int) -> dict[str, Any]:
        if not 0 <= i < len(self):
            raise IndexError(i)
        path = self.paths[i // self.clips]
        batch = samplers.clips_at_random_indices(self._decoder(path), num_clips=1, num_frames_per_clip=self.frames, seed=i)
        return {"item": i, "path": path, "frames": batch.data[0], "pts": batch.pts_seconds[0]}

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_decoders"] = {}            # decoders stay in the process that opened them
        return state


def describe(item: dict[str, Any]) -> str:
    frames = item["frames"]
    data = frames.numpy() if hasattr(frames, "numpy") else frames
    digest = hashlib.md5(data.tobytes()).hexdigest()
    pts = ",".join(f"{float(t):.6f}" for t in item["pts"])
    return f"{int(item['item'])} {item['path']} {tuple(data.shape)} {pts} {digest}"


_DATASET: Optional[ClipDataset] = None


def _pool_init(dataset: ClipDataset) -> None:
    global _DATASET
    _DATASET = dataset


def _pool_item(i: int) -> str:
    assert _DATASET is not None
    return describe(_DATASET[i])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--clips", type=int, default=2, help="clips per file")
    parser.add_argument("--frames", type=int, default=4, help="frames per clip")
    parser.add_argument("--size", default="224x224", help="WxH of the pictures")
    parser.add_argument("--no-torch", action="store_true", help="use a multiprocessing pool even when PyTorch is installed")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    dataset = ClipDataset(args.files, args.clips, args.frames, width, height)
    try:
        if args.no_torch:
            raise ImportError
        import torch.utils.data
    except ImportError:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(args.workers, initializer=_pool_init, initargs=(dataset,)) as pool:
            lines = pool.map(_pool_item, range(len(dataset)))
        print(f"{len(dataset)} clips by {args.workers} worker processes (multiprocessing)", file=sys.stderr)
    else:
        def collate(batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [dict(b, frames=torch.from_numpy(b["frames"])) for b in batch]
        loader = torch.utils.data.DataLoader(dataset, batch_size=1, num_workers=args.workers, collate_fn=collate,
                                             multiprocessing_context="spawn")
        lines = [describe(item) for batch in loader for item in batch]
        print(f"{len(dataset)} clips by {args.workers} DataLoader workers (PyTorch)", file=sys.stderr)
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
