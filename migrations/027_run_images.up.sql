-- Images a run's tool results returned, kept beside the transcript: the tool
-- message holds only their description, and the model activity reads the
-- bytes from here when it builds the next request. (seq, idx): the call's
-- result message and the image's place among its images, so a retried call
-- writes the same rows.
CREATE TABLE run_images (
    run_id     uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq        integer NOT NULL CHECK (seq >= 1),
    idx        integer NOT NULL CHECK (idx >= 1),
    media_type text NOT NULL CHECK (media_type LIKE 'image/%'),
    data       bytea NOT NULL CHECK (octet_length(data) <= 5242880),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, seq, idx)
);
