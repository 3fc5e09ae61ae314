DROP TABLE run_images;
