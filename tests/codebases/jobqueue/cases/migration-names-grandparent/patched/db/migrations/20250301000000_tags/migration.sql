CREATE TABLE `job_tag` (`job_id` text NOT NULL, `tag` text NOT NULL);
