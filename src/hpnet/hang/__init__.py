"""``hpnet hang``: which rank, which group, which collective, and why a job is stuck.

Read (:mod:`.flight` the Flight Recorder dumps, :mod:`.ranklog` the ranks' error
lines), judge (:mod:`.judge`, pure), render (:mod:`.render`); :mod:`.collect` finds the
files of a stuck job in the folders given.
"""
